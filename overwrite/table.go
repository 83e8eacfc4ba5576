package overwrite

import (
	"context"

	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

// Table is a described table; see package table, its home. Describe here refuses
// counter tables, which cannot be overwritten.
type Table = table.Table

// Column is one column of a described table (table.Column).
type Column = table.Column

// ColumnRole is a column's part in the table (table.ColumnRole).
type ColumnRole = table.ColumnRole

// Column roles (table's).
const (
	PartitionKey  = table.PartitionKey
	ClusteringKey = table.ClusteringKey
	Regular       = table.Regular
	Static        = table.Static
)

// Describe is table.Describe for overwrites: it also refuses a table with counter
// columns (ErrCounterTable: counters are not idempotent and cannot be overwritten).
func Describe(ctx context.Context, s *gocql.Session, keyspace, name string) (*Table, error) {
	t, err := table.Describe(ctx, s, keyspace, name)
	if err != nil {
		return nil, err
	}
	return refuseCounters(t)
}

// DescribeGocqlx is table.DescribeGocqlx for overwrites (gocqlx v2 or v3 table.Metadata):
// it also refuses a table with counter columns (ErrCounterTable).
func DescribeGocqlx[M table.GocqlxModel](ctx context.Context, s *gocql.Session, keyspace string, m M) (*Table, error) {
	t, err := table.DescribeGocqlx(ctx, s, keyspace, m)
	if err != nil {
		return nil, err
	}
	return refuseCounters(t)
}

// refuseCounters returns t, or ErrCounterTable naming its first counter column.
func refuseCounters(t *Table) (*Table, error) {
	if err := core.RefuseCounters(t); err != nil {
		return nil, err
	}
	return t, nil
}

// policies holds the default retry policy of each table overwritten without
// WithRetryPolicy, for as long as the table lives (weakly keyed).
var policies core.Policies[Table, retry.Policy]

func defaultPolicy(t *Table) *retry.Policy { return policies.For(t, newPolicy) }

func newPolicy() *retry.Policy { return retry.NewPolicy() }
