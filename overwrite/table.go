package overwrite

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/gocql/gocql"
	gocqlxtable "github.com/scylladb/gocqlx/v2/table"

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

// DescribeGocqlx is table.DescribeGocqlx for overwrites: it also refuses a table with
// counter columns (ErrCounterTable).
func DescribeGocqlx(ctx context.Context, s *gocql.Session, keyspace string, m gocqlxtable.Metadata) (*Table, error) {
	t, err := table.DescribeGocqlx(ctx, s, keyspace, m)
	if err != nil {
		return nil, err
	}
	return refuseCounters(t)
}

// refuseCounters returns t, or ErrCounterTable naming its first counter column.
func refuseCounters(t *Table) (*Table, error) {
	cols := append(slices.Clone(t.Static), t.Regular...)
	slices.SortFunc(cols, func(a, b Column) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range cols {
		if c.Type != nil && c.Type.Type() == gocql.TypeCounter {
			return nil, tableErr(ErrCounterTable, t, c.Name, "counters are not idempotent and cannot be overwritten")
		}
	}
	return t, nil
}

// policies holds the default retry policy of each table overwritten without
// WithRetryPolicy, for as long as the table lives: it caches the idempotence verdicts
// of the table's statements. Keys are weak so a table described again and again is not
// kept alive by this cache.
var policies sync.Map // weak.Pointer[table.Table] → *retry.Policy

func defaultPolicy(t *Table) *retry.Policy {
	k := weak.Make(t)
	if p, ok := policies.Load(k); ok {
		return p.(*retry.Policy)
	}
	p, loaded := policies.LoadOrStore(k, retry.NewPolicy())
	if !loaded {
		runtime.AddCleanup(t, func(k weak.Pointer[table.Table]) { policies.Delete(k) }, k)
	}
	return p.(*retry.Policy)
}
