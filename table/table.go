package table

import (
	"slices"

	"github.com/gocql/gocql"
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
type Column struct {
	Name string
	Role ColumnRole
	Type gocql.TypeInfo
	// CQLType is the type as Cassandra reports it, e.g. "frozen<list<int>>".
	CQLType string
	// Collection is true for a non-frozen list, set, map or user-defined type: Cassandra
	// stores its elements (fields) as separate cells, an INSERT of it writes a
	// collection tombstone, and WRITETIME and TTL of it are lists.
	Collection bool
	index      int    // position in Table.columns and in the INSERT's column list
	marker     string // bind marker text: "?", or "(?, ?)" for a tuple (see tuple.go)
}

// Marker is the column's bind marker text in the statements the builders write: "?",
// or for a tuple column a tuple literal of one marker per element, "(?, ?)" (gocql
// v1.7.0 cannot bind a whole tuple to one marker); Args splits a value to match.
func (c Column) Marker() string {
	if c.marker == "" {
		return "?"
	}
	return c.marker
}

// Table is a described table: its columns, how a row maps to values, its key encoding
// and the statements derived from it. Build it with Describe (or DescribeGocqlx) once
// and reuse it; it is immutable and safe for concurrent use.
type Table struct {
	Keyspace string
	Name     string
	// PartitionKey and Clustering are in key order; Regular and Static in name order.
	PartitionKey []Column
	Clustering   []Column
	Regular      []Column
	Static       []Column

	columns []Column       // all: partition key, clustering, static, regular
	byName  map[string]int // name → index in columns

	hasTuple bool // a column is written as a tuple literal: see InsertRow
	tupleKey bool // a primary key column is: see KeyArgs

	stmts statements // built by Describe: the table is shared, the strings are per row
	memo  *memo      // statements built from chosen columns

	version version // the cluster's oldest release at Describe; unknown from FromMetadata
}

// Columns returns every column: partition key, clustering, static, then regular
// columns. Values and Insert list them in this order.
func (t *Table) Columns() []Column { return slices.Clone(t.columns) }

// Column returns the named column.
func (t *Table) Column(name string) (Column, bool) {
	i, ok := t.byName[name]
	if !ok {
		return Column{}, false
	}
	return t.columns[i], true
}

// KeyColumns returns the partition key then clustering columns.
func (t *Table) KeyColumns() []Column {
	return append(slices.Clone(t.PartitionKey), t.Clustering...)
}

// keyLen is the number of primary key columns: the first keyLen of columns.
func (t *Table) keyLen() int { return len(t.PartitionKey) + len(t.Clustering) }
