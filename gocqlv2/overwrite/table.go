package overwrite

import (
	"context"
	"errors"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/table"
	core "github.com/cqlsafe/cqlsafe/internal/core/overwrite"
)

// Table is a described table (gocqlv2/table's). Describe here refuses counter tables,
// which cannot be overwritten.
type Table = table.Table

// Column is one column of a described table (table.Column).
type Column = table.Column

// Describe is table.Describe for overwrites: it also refuses a table with counter
// columns (ErrCounterTable: counters are not idempotent and cannot be overwritten).
func Describe(ctx context.Context, s *gocql.Session, keyspace, name string) (*Table, error) {
	t, err := table.Describe(ctx, s, keyspace, name)
	if err != nil {
		return nil, err
	}
	if err := core.RefuseCounters(t); err != nil {
		return nil, err
	}
	return t, nil
}

// Sentinels, matched with errors.Is: package table's and the overwrite packages' (the
// same values as github.com/cqlsafe/cqlsafe/overwrite's).
var (
	ErrInvalidName       = table.ErrInvalidName
	ErrUnknownTable      = table.ErrUnknownTable
	ErrNotARow           = table.ErrNotARow
	ErrUnknownColumn     = table.ErrUnknownColumn
	ErrMissingKey        = table.ErrMissingKey
	ErrBadValue          = table.ErrBadValue
	ErrCounterTable      = core.ErrCounterTable
	ErrMixedPartitions   = core.ErrMixedPartitions
	ErrNoRows            = core.ErrNoRows
	ErrListNotRepeatable = core.ErrListNotRepeatable
)

// Error is the typed error behind every sentinel (table.Error; Row is the index in the
// rows given to Partition, -1 otherwise).
type Error = table.Error

// Scope is what an overwrite's DELETE removes: ScopeRow or ScopePartition.
type Scope = core.Scope

// Scopes.
const (
	ScopeRow       = core.ScopeRow
	ScopePartition = core.ScopePartition
)

// Result reports an overwrite: its timestamp N (the DELETE at N, the INSERTs at N+1),
// scope, rows and how many batches were sent.
type Result = core.Result

// policies holds the default retry policy of each table overwritten without
// WithRetryPolicy, for as long as the table lives (weakly keyed).
var policies core.Policies[Table, retry.Policy]

func newPolicy() *retry.Policy { return retry.NewPolicy() }

var errNilSession = errors.New("overwrite: nil session")
