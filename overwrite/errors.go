package overwrite

import (
	"errors"

	core "github.com/cqlsafe/cqlsafe/internal/core/overwrite"
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

	ErrCounterTable    = core.ErrCounterTable
	ErrMixedPartitions = core.ErrMixedPartitions
	ErrNoRows          = core.ErrNoRows
	// ErrListNotRepeatable: WithTimestamp (a re-application) with a non-empty value for a
	// non-frozen list column. Cassandra keys list elements by server-side TimeUUIDs, so
	// re-applying appends a second copy; use frozen<list<…>> or set<…>, or overwrite
	// again without WithTimestamp (a fresh, newer timestamp).
	ErrListNotRepeatable = core.ErrListNotRepeatable
)

// Error is the typed error behind every sentinel: which table, row and column, and why
// (table.Error; Row is the index in the rows given to Partition, -1 otherwise).
type Error = table.Error

var errNilSession = errors.New("overwrite: nil session")
