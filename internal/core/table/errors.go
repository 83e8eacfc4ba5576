package table

import (
	"errors"
	"fmt"
)

// Sentinels, matched with errors.Is. Every error this package returns for bad input
// wraps one of them in an *Error; it is returned before anything is sent to Cassandra.
var (
	ErrInvalidName      = errors.New("table: invalid keyspace or table name")
	ErrUnknownTable     = errors.New("table: unknown table")
	ErrNotARow          = errors.New("table: not a row")
	ErrUnknownColumn    = errors.New("table: unknown column")
	ErrMissingKey       = errors.New("table: missing or null primary key column")
	ErrBadValue         = errors.New("table: value does not fit the column type")
	ErrMetadataMismatch = errors.New("table: gocqlx metadata does not match the table")
	// ErrUnsupported: the cluster's Cassandra version cannot run the statement asked
	// for (an *UnsupportedError says which column and version). Returned before
	// anything is sent, instead of the server's error or a different answer.
	ErrUnsupported = errors.New("table: not supported by the cluster's cassandra version")
)

// Error is the typed error behind every sentinel: which table, row and column, and why.
// Packages built on this one (overwrite) wrap their own sentinels in it too.
type Error struct {
	Err      error // the sentinel
	Keyspace string
	Table    string
	Column   string // empty when not about one column
	// Row is the row's index among several given at once (overwrite.Partition sets
	// it); -1 otherwise.
	Row    int
	Detail string
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

// Unwrap returns the sentinel, so errors.Is matches it.
func (e *Error) Unwrap() error { return e.Err }

// errorFor returns an *Error about t (nil: no table) for sentinel, with Row -1.
func errorFor[TI any](sentinel error, t *Table[TI], column, detail string) *Error {
	e := &Error{Err: sentinel, Column: column, Row: -1, Detail: detail}
	if t != nil {
		e.Keyspace, e.Table = t.Keyspace, t.Name
	}
	return e
}

// UnsupportedError is the typed error behind ErrUnsupported: what the column needs that
// the cluster's oldest node lacks.
type UnsupportedError struct {
	Keyspace, Table, Column string
	CQLType                 string // the column's type, e.g. "set<text>"
	Feature                 string // what was asked, e.g. "WRITETIME and TTL of a non-frozen collection or UDT"
	Version                 string // the cluster's (oldest node's) release_version
	Needs                   string // the first version that has it, e.g. "5.0"
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%v: table %s.%s column %q (%s): %s needs cassandra %s, the cluster runs %s",
		ErrUnsupported, e.Keyspace, e.Table, e.Column, e.CQLType, e.Feature, e.Needs, e.Version)
}

// Unwrap returns ErrUnsupported, so errors.Is matches it.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }
