package table

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// The builders return CQL text. Every identifier is quoted (case and reserved words
// survive) and every value is a bind marker; what each statement binds, in order, is
// in its doc. The Table builds the per-row statements once and keeps them; builders
// that take column names build each distinct statement once too.

// Using says which USING clauses a write carries. Their values are bound after the
// statement's other values, the TTL first.
type Using uint8

const (
	// UsingTTL: USING TTL ?. Bind the driver's UnsetValue for none: the table's
	// default_time_to_live then applies, which an explicit 0 would override.
	UsingTTL Using = 1 << iota
	// UsingTimestamp: USING TIMESTAMP ?, the write timestamp in µs since the epoch.
	UsingTimestamp
)

// Cell says what a SELECT reads of each non-key column it names; combine them with |.
// Key columns are read by value whatever it says (they have no write time or TTL).
type Cell uint8

const (
	// CellValue reads the value (also what a zero Cell reads).
	CellValue Cell = 1 << iota
	// CellWriteTime reads WRITETIME(c), or MAXWRITETIME(c) for a non-frozen
	// collection or UDT (Cassandra 5.0): the newest of its elements' write times.
	CellWriteTime
	// CellTTL reads TTL(c): the remaining seconds, null for none; for a non-frozen
	// collection or UDT (Cassandra 5.0) the list of its elements' TTLs.
	CellTTL
)

// Before Cassandra 5.0 (the Table's CassandraVersion) WRITETIME and TTL of a non-frozen
// collection or UDT are refused by the server and MAXWRITETIME does not exist: asking
// for them is an *UnsupportedError (ErrUnsupported) naming the column, not a statement
// the server would reject. Scalars, frozen collections, tuples and frozen UDTs read the
// same on every version.

// statements are the per-row statements, built once by Build.
type statements struct {
	insert          [4]string // by Using
	deleteRow       string
	deletePartition string
	countRange      string
}

func buildStatements[TI any](t *Table[TI]) statements {
	var st statements
	q := cqltext.QuoteQualified(t.Keyspace, t.Name)
	names := make([]string, len(t.columns))
	for i, c := range t.columns {
		names[i] = c.Name
	}
	for u := range st.insert {
		st.insert[u] = t.insertOf(names, Using(u))
	}
	st.deletePartition = "DELETE FROM " + q + " USING TIMESTAMP ? WHERE " + equal(t.PartitionKey)
	st.deleteRow = "DELETE FROM " + q + " USING TIMESTAMP ? WHERE " + equal(t.columns[:t.keyLen()])
	tok := token(t)
	st.countRange = "SELECT COUNT(*) FROM " + q + " WHERE " + tok + " > ? AND " + tok + " <= ?"
	return st
}

// insertOf is INSERT INTO t (names) VALUES (their markers) with u's clauses.
func (t *Table[TI]) insertOf(names []string, u Using) string {
	cols := make([]string, len(names))
	marks := make([]string, len(names))
	for i, name := range names {
		cols[i], marks[i] = cqltext.Quote(name), t.columns[t.byName[name]].Marker()
	}
	return "INSERT INTO " + cqltext.QuoteQualified(t.Keyspace, t.Name) + " (" + strings.Join(cols, ", ") + ") VALUES (" +
		strings.Join(marks, ", ") + ")" + using(u)
}

// using renders u's clauses: TTL first, then TIMESTAMP, as the values are bound.
func using(u Using) string {
	switch u & (UsingTTL | UsingTimestamp) {
	case UsingTTL:
		return " USING TTL ?"
	case UsingTimestamp:
		return " USING TIMESTAMP ?"
	case UsingTTL | UsingTimestamp:
		return " USING TTL ? AND TIMESTAMP ?"
	}
	return ""
}

// equal is `"a" = ? AND "b" = ?` over cols.
func equal[TI any](cols []Column[TI]) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = cqltext.Quote(c.Name) + " = " + c.Marker()
	}
	return strings.Join(parts, " AND ")
}

// token is token("pk1", "pk2"): the partition's position on the ring.
func token[TI any](t *Table[TI]) string {
	pk := make([]string, len(t.PartitionKey))
	for i, c := range t.PartitionKey {
		pk[i] = cqltext.Quote(c.Name)
	}
	return "token(" + strings.Join(pk, ", ") + ")"
}

// Insert returns INSERT INTO t (every column, in Columns order) VALUES (?, …) with the
// USING clauses u asks for. Binds: Values(row), then the TTL, then the timestamp. On a
// table with a tuple column, use InsertRow, which binds a tuple element by element
// and leaves out a tuple the row does not give.
func (t *Table[TI]) Insert(u Using) string { return t.stmts.insert[u&(UsingTTL|UsingTimestamp)] }

// DeleteRow returns DELETE FROM t USING TIMESTAMP ? WHERE <every primary key column>
// = ?: a row deletion, or without clustering columns the partition's. Binds: the
// timestamp, then KeyArgs(KeyValues) (a tuple key column binds its elements).
func (t *Table[TI]) DeleteRow() string { return t.stmts.deleteRow }

// DeletePartition returns DELETE FROM t USING TIMESTAMP ? WHERE <partition key> = ?.
// Binds: the timestamp, then the partition key values (KeyValues' first
// len(PartitionKey)).
func (t *Table[TI]) DeletePartition() string { return t.stmts.deletePartition }

// CountRange returns SELECT COUNT(*) FROM t WHERE token(<partition key>) > ? AND
// token(…) <= ?: the rows of one token range. Binds: the range's bounds (int64).
func (t *Table[TI]) CountRange() string { return t.stmts.countRange }

// SelectByKey returns SELECT <cells of columns> FROM t WHERE <every primary key column>
// = ?: columns in the order given, each read as cells says (see Cell). With no columns
// it reads the first partition key column, which tells whether the row exists. Binds:
// KeyValues. An unknown column is ErrUnknownColumn; a write time or TTL the cluster's
// version cannot read is ErrUnsupported.
func (t *Table[TI]) SelectByKey(cells Cell, columns ...string) (string, error) {
	return t.memoized(memoSelect, cells, columns, func(sel string) string {
		return "SELECT " + sel + " FROM " + cqltext.QuoteQualified(t.Keyspace, t.Name) + " WHERE " + equal(t.columns[:t.keyLen()])
	})
}

// SelectByPartitionKey returns SELECT <cells of columns> FROM t WHERE <every partition
// key column> = ? LIMIT 1: the way to read static columns alone (Cassandra refuses a
// clustering restriction when only static columns are selected). Binds: the first
// len(PartitionKey) of KeyArgs.
func (t *Table[TI]) SelectByPartitionKey(cells Cell, columns ...string) (string, error) {
	return t.memoized(memoSelectPartition, cells, columns, func(sel string) string {
		return "SELECT " + sel + " FROM " + cqltext.QuoteQualified(t.Keyspace, t.Name) + " WHERE " + equal(t.columns[:len(t.PartitionKey)]) + " LIMIT 1"
	})
}

// ScanRange returns SELECT <cells of columns> FROM t WHERE token(<partition key>) > ?
// AND token(…) <= ?: every row of one token range, columns as in SelectByKey. Binds:
// the range's bounds (int64; Murmur3Partitioner tokens). Page through it.
func (t *Table[TI]) ScanRange(cells Cell, columns ...string) (string, error) {
	return t.memoized(memoScan, cells, columns, func(sel string) string {
		tok := token(t)
		return "SELECT " + sel + " FROM " + cqltext.QuoteQualified(t.Keyspace, t.Name) + " WHERE " + tok + " > ? AND " + tok + " <= ?"
	})
}

// Update returns UPDATE t [USING …] SET "c1" = ?, … WHERE <every primary key column>
// = ?: columns in the order given, each assigned whole. Binds: the TTL and timestamp u
// asks for, the columns' values, then KeyValues. No columns, an unknown column
// (ErrUnknownColumn) or a primary key column (which UPDATE cannot set) is an error.
func (t *Table[TI]) Update(u Using, columns ...string) (string, error) {
	if len(columns) == 0 {
		return "", errorFor(ErrUnknownColumn, t, "", "UPDATE needs a column to set")
	}
	for _, name := range columns {
		if i, ok := t.byName[name]; ok && i < t.keyLen() {
			return "", errorFor(ErrUnknownColumn, t, name, "a primary key column cannot be set")
		}
	}
	return t.memoized(memoUpdate+memoKind(u&(UsingTTL|UsingTimestamp)), 0, columns, func(string) string {
		sets := make([]string, len(columns))
		for i, name := range columns {
			sets[i] = cqltext.Quote(name) + " = " + t.columns[t.byName[name]].Marker()
		}
		return "UPDATE " + cqltext.QuoteQualified(t.Keyspace, t.Name) + using(u) + " SET " + strings.Join(sets, ", ") +
			" WHERE " + equal(t.columns[:t.keyLen()])
	})
}

type memoKind uint8

const (
	memoSelect memoKind = iota
	memoScan
	memoUpdate                           // + Using
	memoInsert          = memoUpdate + 4 // + Using
	memoSelectPartition = memoInsert + 4
)

type memoKey struct {
	kind    memoKind
	cells   Cell
	columns string // names joined by NUL, which no name holds
}

// memoized returns the statement build makes of the columns' selection list, built
// once per (kind, cells, columns) for a described Table.
func (t *Table[TI]) memoized(kind memoKind, cells Cell, columns []string, build func(sel string) string) (string, error) {
	if cells &= CellValue | CellWriteTime | CellTTL; cells == 0 {
		cells = CellValue
	}
	key := memoKey{kind: kind, cells: cells, columns: strings.Join(columns, "\x00")}
	if t.memo != nil {
		if s, ok := t.memo.m.Load(key); ok {
			return s.(string), nil
		}
	}
	if len(t.columns) == 0 {
		return "", errorFor(ErrUnknownTable, t, "", "table not described")
	}
	if len(columns) == 0 {
		columns = []string{t.columns[0].Name}
	}
	var sel []string
	for _, name := range columns {
		i, ok := t.byName[name]
		if !ok {
			return "", errorFor(ErrUnknownColumn, t, name, "")
		}
		c := t.columns[i]
		q := cqltext.Quote(name)
		if i < t.keyLen() {
			sel = append(sel, q)
			continue
		}
		if cells&(CellWriteTime|CellTTL) != 0 {
			if err := t.cellTimesSupported(c); err != nil {
				return "", err
			}
		}
		if cells&CellValue != 0 {
			sel = append(sel, q)
		}
		if cells&CellWriteTime != 0 {
			if c.Collection {
				sel = append(sel, "MAXWRITETIME("+q+")")
			} else {
				sel = append(sel, "WRITETIME("+q+")")
			}
		}
		if cells&CellTTL != 0 {
			sel = append(sel, "TTL("+q+")")
		}
	}
	s := build(strings.Join(sel, ", "))
	// Bounded: callers that pick column subsets per row (tombstone's restore) must not
	// grow a shared Table without limit.
	if t.memo != nil && t.memo.n.Add(1) <= memoMax {
		t.memo.m.Store(key, s)
	}
	return s, nil
}

// memo holds statements built from chosen columns.
type memo struct {
	m sync.Map // memoKey → string
	n atomic.Int32
}

const memoMax = 256
