package table

import (
	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/table"
)

// ColumnRole is a column's part in the table.
type ColumnRole = core.ColumnRole

// Column roles.
const (
	PartitionKey  = core.PartitionKey
	ClusteringKey = core.ClusteringKey
	Regular       = core.Regular
	Static        = core.Static
)

// Column is one column of a described table; its Type is gocql's TypeInfo of it
// (user-defined types and vectors included, built from the type text).
type Column = core.Column[gocql.TypeInfo]

// Table is a described table: its columns, how a row maps to values, its key encoding
// and the statements derived from it (see the package doc). Build it with Describe (or
// DescribeGocqlx) once and reuse it; it is immutable and safe for concurrent use. Its
// rules are shared with the v2 driver's table package (internal/core/table).
type Table = core.Table[gocql.TypeInfo]

// Using says which USING clauses a write carries. Their values are bound after the
// statement's other values, the TTL first.
type Using = core.Using

const (
	// UsingTTL: USING TTL ?. Bind gocql.UnsetValue for none: the table's
	// default_time_to_live then applies, which an explicit 0 would override.
	UsingTTL = core.UsingTTL
	// UsingTimestamp: USING TIMESTAMP ?, the write timestamp in µs since the epoch.
	UsingTimestamp = core.UsingTimestamp
)

// Cell says what a SELECT reads of each non-key column it names; combine them with |.
// Key columns are read by value whatever it says (they have no write time or TTL).
type Cell = core.Cell

const (
	// CellValue reads the value (also what a zero Cell reads).
	CellValue = core.CellValue
	// CellWriteTime reads WRITETIME(c), or MAXWRITETIME(c) for a non-frozen
	// collection or UDT (Cassandra 5.0): the newest of its elements' write times.
	CellWriteTime = core.CellWriteTime
	// CellTTL reads TTL(c): the remaining seconds, null for none; for a non-frozen
	// collection or UDT (Cassandra 5.0) the list of its elements' TTLs.
	CellTTL = core.CellTTL
)

// Sentinels, matched with errors.Is. Every error this package returns for bad input
// wraps one of them in an *Error; it is returned before anything is sent to Cassandra.
var (
	ErrInvalidName      = core.ErrInvalidName
	ErrUnknownTable     = core.ErrUnknownTable
	ErrNotARow          = core.ErrNotARow
	ErrUnknownColumn    = core.ErrUnknownColumn
	ErrMissingKey       = core.ErrMissingKey
	ErrBadValue         = core.ErrBadValue
	ErrMetadataMismatch = core.ErrMetadataMismatch
	// ErrUnsupported: the cluster's Cassandra version cannot run the statement asked
	// for (an *UnsupportedError says which column and version). Returned before
	// anything is sent, instead of the server's error or a different answer.
	ErrUnsupported = core.ErrUnsupported
)

// Error is the typed error behind every sentinel: which table, row and column, and why.
// Packages built on this one (overwrite) wrap their own sentinels in it too.
type Error = core.Error

// UnsupportedError is the typed error behind ErrUnsupported: what the column needs that
// the cluster's oldest node lacks.
type UnsupportedError = core.UnsupportedError
