package overwrite

import (
	"errors"
	"fmt"
)

// Sentinels, matched with errors.Is. Every error this package returns for bad input
// wraps one of them in an *Error; nothing is sent to Cassandra when one is returned.
var (
	ErrInvalidName      = errors.New("overwrite: invalid keyspace or table name")
	ErrUnknownTable     = errors.New("overwrite: unknown table")
	ErrCounterTable     = errors.New("overwrite: table has counter columns")
	ErrNotARow          = errors.New("overwrite: not a row")
	ErrUnknownColumn    = errors.New("overwrite: unknown column")
	ErrMissingKey       = errors.New("overwrite: missing or null primary key column")
	ErrBadValue         = errors.New("overwrite: value does not fit the column type")
	ErrMixedPartitions  = errors.New("overwrite: rows of different partitions")
	ErrNoRows           = errors.New("overwrite: no rows")
	ErrMetadataMismatch = errors.New("overwrite: gocqlx metadata does not match the table")
	// ErrListNotRepeatable: WithTimestamp (a re-application) with a non-empty value for a
	// non-frozen list column. Cassandra keys list elements by server-side TimeUUIDs, so
	// re-applying appends a second copy; use frozen<list<…>> or set<…>, or overwrite
	// again without WithTimestamp (a fresh, newer timestamp).
	ErrListNotRepeatable = errors.New("overwrite: non-frozen list cannot be re-applied with a pinned timestamp")
)

// Error is the typed error behind every sentinel: which table, row and column, and why.
type Error struct {
	Err      error // one of the sentinels
	Keyspace string
	Table    string
	Column   string // empty when not about one column
	Row      int    // index in the rows given to Partition; -1 otherwise
	Detail   string
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Table != "" {
		msg += fmt.Sprintf(": table %s.%s", e.Keyspace, e.Table)
	}
	if e.Row >= 0 {
		msg += fmt.Sprintf(" row %d", e.Row)
	}
	if e.Column != "" {
		msg += fmt.Sprintf(" column %q", e.Column)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func tableErr(sentinel error, t *Table, column, detail string) *Error {
	e := &Error{Err: sentinel, Column: column, Row: -1, Detail: detail}
	if t != nil {
		e.Keyspace, e.Table = t.Keyspace, t.Name
	}
	return e
}
