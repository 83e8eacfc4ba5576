// Package table is cqlsafe's table description without a driver: a table's columns, how
// a row maps to values, the primary key's byte encoding, tuples, and the CQL statements
// that write, read, delete and scan it. Each driver adapter (table for gocql v1.7,
// gocqlv2/table for the Apache driver v2) instantiates Table with its type description
// and a Driver, and reads the table's metadata with its session; the rules are here.
package table

import (
	"slices"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
)

// ColumnRole is a column's part in the table.
type ColumnRole int

// Column roles.
const (
	PartitionKey ColumnRole = iota
	ClusteringKey
	Regular
	Static
)

func (r ColumnRole) String() string {
	if r < PartitionKey || r > Static {
		return "unknown"
	}
	return [...]string{"partition key", "clustering key", "regular", "static"}[r]
}

// Column is one column of a described table.
type Column[TI any] struct {
	Name string
	Role ColumnRole
	// Type is the driver's description of the column's type.
	Type TI
	// CQLType is the type as Cassandra reports it, e.g. "frozen<list<int>>".
	CQLType string
	// Collection is true for a non-frozen list, set, map or user-defined type: Cassandra
	// stores its elements (fields) as separate cells, an INSERT of it writes a
	// collection tombstone, and WRITETIME and TTL of it are lists.
	Collection bool
	index      int          // position in Table.columns and in the INSERT's column list
	marker     string       // bind marker text: "?", or "(?, ?)" for a tuple (see tuple.go)
	tree       cqltype.Type // the parsed type; Kind Native with Name "" when unparsed
}

// Marker is the column's bind marker text in the statements the builders write: "?",
// or for a tuple column a tuple literal of one marker per element, "(?, ?)" (gocql
// v1.7.0 cannot bind a whole tuple to one marker, and both drivers bind alike); Args
// splits a value to match.
func (c Column[TI]) Marker() string {
	if c.marker == "" {
		return "?"
	}
	return c.marker
}

// Table is a described table: its columns, how a row maps to values, its key encoding
// and the statements derived from it. Build it with the driver package's Describe once
// and reuse it; it is immutable and safe for concurrent use.
type Table[TI any] struct {
	Keyspace string
	Name     string
	// PartitionKey and Clustering are in key order; Regular and Static in name order.
	PartitionKey []Column[TI]
	Clustering   []Column[TI]
	Regular      []Column[TI]
	Static       []Column[TI]

	columns []Column[TI]   // all: partition key, clustering, static, regular
	byName  map[string]int // name → index in columns

	hasTuple bool // a column is written as a tuple literal: see InsertRow
	tupleKey bool // a primary key column is: see KeyArgs

	stmts statements // built by Build: the table is shared, the strings are per row
	memo  *memo      // statements built from chosen columns

	version version // the cluster's oldest release at Describe; unknown without it
	drv     Driver[TI]
	unset   any // drv.Unset()
}

// Columns returns every column: partition key, clustering, static, then regular
// columns. Values and Insert list them in this order.
func (t *Table[TI]) Columns() []Column[TI] { return slices.Clone(t.columns) }

// Column returns the named column.
func (t *Table[TI]) Column(name string) (Column[TI], bool) {
	i, ok := t.byName[name]
	if !ok {
		return Column[TI]{}, false
	}
	return t.columns[i], true
}

// KeyColumns returns the partition key then clustering columns.
func (t *Table[TI]) KeyColumns() []Column[TI] {
	return append(slices.Clone(t.PartitionKey), t.Clustering...)
}

// keyLen is the number of primary key columns: the first keyLen of columns.
func (t *Table[TI]) keyLen() int { return len(t.PartitionKey) + len(t.Clustering) }

// Unset is what the table's driver binds as UNSET (gocql.UnsetValue).
func (t *Table[TI]) Unset() any { return t.unset }

// native is the column's native type name ("int"), empty for other kinds (a UDT's name
// is not a native type's, even when it is written "text").
func (c *Column[TI]) native() string {
	if c.tree.Kind != cqltype.Native {
		return ""
	}
	return c.tree.Name
}

// IsCounter reports a counter column.
func (c Column[TI]) IsCounter() bool {
	return c.tree.Kind == cqltype.Native && c.tree.Name == "counter"
}

// IsUDT reports a user-defined type column (frozen or not) whose type was described
// with the keyspace's user types.
func (c Column[TI]) IsUDT() bool { return c.tree.Kind == cqltype.UDT }

// IsList reports a non-frozen list: Cassandra keys its elements by TimeUUIDs from the
// server's clock, so writing it twice appends twice.
func (c Column[TI]) IsList() bool { return c.Collection && c.tree.Kind == cqltype.List }
