package overwrite

import (
	"errors"

	"github.com/cqlsafe/cqlsafe/table"
)

// Sentinels, matched with errors.Is. Every error this package returns for bad input
// wraps one of them in an *Error; nothing is sent to Cassandra when one is returned.
// The first seven are package table's, the same values under overwrite's names:
// errors.Is matches either.
var (
	ErrInvalidName      = table.ErrInvalidName
	ErrUnknownTable     = table.ErrUnknownTable
	ErrNotARow          = table.ErrNotARow
	ErrUnknownColumn    = table.ErrUnknownColumn
	ErrMissingKey       = table.ErrMissingKey
	ErrBadValue         = table.ErrBadValue
	ErrMetadataMismatch = table.ErrMetadataMismatch

	ErrCounterTable    = errors.New("overwrite: table has counter columns")
	ErrMixedPartitions = errors.New("overwrite: rows of different partitions")
	ErrNoRows          = errors.New("overwrite: no rows")
	// ErrListNotRepeatable: WithTimestamp (a re-application) with a non-empty value for a
	// non-frozen list column. Cassandra keys list elements by server-side TimeUUIDs, so
	// re-applying appends a second copy; use frozen<list<…>> or set<…>, or overwrite
	// again without WithTimestamp (a fresh, newer timestamp).
	ErrListNotRepeatable = errors.New("overwrite: non-frozen list cannot be re-applied with a pinned timestamp")
)

// Error is the typed error behind every sentinel: which table, row and column, and why
// (table.Error; Row is the index in the rows given to Partition, -1 otherwise).
type Error = table.Error

func tableErr(sentinel error, t *Table, column, detail string) *Error {
	e := &Error{Err: sentinel, Column: column, Row: -1, Detail: detail}
	if t != nil {
		e.Keyspace, e.Table = t.Keyspace, t.Name
	}
	return e
}
