package overwrite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/scylladb/gocqlx/v2/table"

	"github.com/cqlsafe/cqlsafe/internal/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/wait"
	"github.com/cqlsafe/cqlsafe/retry"
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
	return [...]string{"partition key", "clustering key", "regular", "static"}[r]
}

// Column is one column of a described table.
type Column struct {
	Name string
	Role ColumnRole
	Type gocql.TypeInfo
	// CQLType is the type as Cassandra reports it, e.g. "frozen<list<int>>".
	CQLType string
	// Collection is true for a non-frozen list, set or map: Cassandra stores its
	// elements as separate cells, and an INSERT of it writes a collection tombstone.
	Collection bool
	index      int // position in Table.columns and in the INSERT's column list
}

// Table is a table described for overwrites: its columns and the statements used to
// overwrite its rows. Build it with Describe (or DescribeGocqlx) once and reuse it; it
// is immutable and safe for concurrent use.
type Table struct {
	Keyspace string
	Name     string
	// PartitionKey and Clustering are in key order; Regular and Static in name order.
	PartitionKey []Column
	Clustering   []Column
	Regular      []Column
	Static       []Column

	columns []Column       // all, in INSERT column order
	byName  map[string]int // name → index in columns

	// policy retries overwrites of this table unless WithRetryPolicy says otherwise; it
	// caches the idempotence verdicts of the statements above.
	policy *retry.Policy

	insertCQL          string // INSERT INTO … (all columns) VALUES (…) USING TTL ? AND TIMESTAMP ?
	deleteRowCQL       string // DELETE FROM … USING TIMESTAMP ? WHERE <primary key>
	deletePartitionCQL string // DELETE FROM … USING TIMESTAMP ? WHERE <partition key>
}

// Columns returns every column in the order the INSERT lists them.
func (t *Table) Columns() []Column { return slices.Clone(t.columns) }

// Column returns the named column.
func (t *Table) Column(name string) (Column, bool) {
	i, ok := t.byName[name]
	if !ok {
		return Column{}, false
	}
	return t.columns[i], true
}

// Describe reads the table's metadata from the session: partition key, clustering
// columns, regular and static columns and their types. An unknown keyspace or table is
// ErrUnknownTable; a table with counter columns is ErrCounterTable (counters cannot be
// overwritten: they are not idempotent). Names are taken as Cassandra stores them
// (case-sensitive, unquoted).
func Describe(ctx context.Context, s *gocql.Session, keyspace, tableName string) (*Table, error) {
	if err := cqltext.ValidName(keyspace); err != nil {
		return nil, &Error{Err: ErrInvalidName, Keyspace: keyspace, Table: tableName, Row: -1, Detail: err.Error()}
	}
	if err := cqltext.ValidName(tableName); err != nil {
		return nil, &Error{Err: ErrInvalidName, Keyspace: keyspace, Table: tableName, Row: -1, Detail: err.Error()}
	}
	if s == nil {
		return nil, errors.New("overwrite: nil session")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// gocql caches a keyspace's metadata and drops it when a schema change event
	// arrives, debounced by about a second: a table created just now may not be in the
	// cache yet. Look again for a few seconds before calling it unknown.
	deadline := time.Now().Add(describeWait)
	for {
		km, err := s.KeyspaceMetadata(keyspace)
		missing := &Error{Err: ErrUnknownTable, Keyspace: keyspace, Table: tableName, Row: -1}
		switch {
		case errors.Is(err, gocql.ErrKeyspaceDoesNotExist):
			missing.Detail = "keyspace does not exist"
		case err != nil:
			return nil, fmt.Errorf("overwrite: describe %s.%s: %w", keyspace, tableName, err)
		default:
			if tm, ok := km.Tables[tableName]; ok {
				return fromMetadata(tm)
			}
		}
		if time.Now().After(deadline) {
			return nil, missing
		}
		if err := wait.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, missing
		}
	}
}

// describeWait bounds how long Describe waits for a new table to reach gocql's
// metadata cache.
const describeWait = 3 * time.Second

// DescribeGocqlx is Describe for callers who already describe tables with gocqlx: it
// reads the table from the session and checks that m's partition key, sort key and
// columns match it (ErrMetadataMismatch otherwise).
func DescribeGocqlx(ctx context.Context, s *gocql.Session, keyspace string, m table.Metadata) (*Table, error) {
	name := m.Name
	if i := strings.IndexByte(name, '.'); i >= 0 { // gocqlx allows "keyspace.table"
		keyspace, name = name[:i], name[i+1:]
	}
	t, err := Describe(ctx, s, keyspace, name)
	if err != nil {
		return nil, err
	}
	names := func(cs []Column) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Name
		}
		return out
	}
	if !slices.Equal(m.PartKey, names(t.PartitionKey)) {
		return nil, tableErr(ErrMetadataMismatch, t, "", fmt.Sprintf("partition key %v, table has %v", m.PartKey, names(t.PartitionKey)))
	}
	if !slices.Equal(m.SortKey, names(t.Clustering)) {
		return nil, tableErr(ErrMetadataMismatch, t, "", fmt.Sprintf("sort key %v, table has %v", m.SortKey, names(t.Clustering)))
	}
	for _, c := range m.Columns {
		if _, ok := t.byName[c]; !ok {
			return nil, tableErr(ErrMetadataMismatch, t, c, "column not in the table")
		}
	}
	return t, nil
}

func fromMetadata(tm *gocql.TableMetadata) (*Table, error) {
	t := &Table{Keyspace: tm.Keyspace, Name: tm.Name, byName: map[string]int{}}
	conv := func(cm *gocql.ColumnMetadata, role ColumnRole) Column {
		c := Column{Name: cm.Name, Role: role, Type: withProto(cm.Type), CQLType: cm.Validator}
		if cm.Type != nil {
			switch cm.Type.Type() {
			case gocql.TypeList, gocql.TypeSet, gocql.TypeMap:
				c.Collection = !strings.HasPrefix(strings.ToLower(cm.Validator), "frozen<")
			}
		}
		return c
	}
	for _, cm := range tm.PartitionKey {
		t.PartitionKey = append(t.PartitionKey, conv(cm, PartitionKey))
	}
	for _, cm := range tm.ClusteringColumns {
		t.Clustering = append(t.Clustering, conv(cm, ClusteringKey))
	}
	var names []string
	for name := range tm.Columns {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		cm := tm.Columns[name]
		if cm.Type != nil && cm.Type.Type() == gocql.TypeCounter {
			return nil, tableErr(ErrCounterTable, t, name, "counters are not idempotent and cannot be overwritten")
		}
		switch cm.Kind {
		case gocql.ColumnRegular, gocql.ColumnCompact:
			t.Regular = append(t.Regular, conv(cm, Regular))
		case gocql.ColumnStatic:
			t.Static = append(t.Static, conv(cm, Static))
		}
	}
	if len(t.PartitionKey) == 0 {
		return nil, tableErr(ErrUnknownTable, t, "", "table metadata has no partition key")
	}
	for _, group := range [][]Column{t.PartitionKey, t.Clustering, t.Static, t.Regular} {
		for i := range group {
			group[i].index = len(t.columns)
			t.byName[group[i].Name] = group[i].index
			t.columns = append(t.columns, group[i])
		}
	}
	t.buildStatements()
	t.policy = retry.NewPolicy()
	return t, nil
}

// buildStatements renders the three statements an overwrite uses. Every identifier is
// quoted; every value, TTL and timestamp is a bind marker.
func (t *Table) buildStatements() {
	q := cqltext.QuoteQualified(t.Keyspace, t.Name)
	cols := make([]string, len(t.columns))
	marks := make([]string, len(t.columns))
	for i, c := range t.columns {
		cols[i] = cqltext.Quote(c.Name)
		marks[i] = "?"
	}
	// One statement text serves both: the TTL is bound, UNSET when none was given.
	t.insertCQL = fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) USING TTL ? AND TIMESTAMP ?",
		q, strings.Join(cols, ", "), strings.Join(marks, ", "))
	where := func(cs []Column) string {
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = cqltext.Quote(c.Name) + " = ?"
		}
		return strings.Join(parts, " AND ")
	}
	t.deletePartitionCQL = fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE %s", q, where(t.PartitionKey))
	if len(t.Clustering) == 0 {
		t.deleteRowCQL = t.deletePartitionCQL
	} else {
		t.deleteRowCQL = fmt.Sprintf("DELETE FROM %s USING TIMESTAMP ? WHERE %s", q, where(append(slices.Clone(t.PartitionKey), t.Clustering...)))
	}
}

// KeyValues extracts and validates the primary key of row (a map or struct, as Row
// takes it): partition key then clustering columns, in key order. Other columns the row
// gives are checked (known, right type) but not returned. Missing or nil key columns are
// ErrMissingKey.
func (t *Table) KeyValues(row any) ([]any, error) {
	vals, err := t.rowValues(row, -1, make([]any, 0, len(t.columns)))
	if err != nil {
		return nil, err
	}
	return vals[:len(t.PartitionKey)+len(t.Clustering)], nil
}

// KeyColumns returns the partition key then clustering columns.
func (t *Table) KeyColumns() []Column {
	return append(slices.Clone(t.PartitionKey), t.Clustering...)
}

// EncodeKey encodes primary key values (as KeyValues returns them) into a deterministic
// byte string: each value marshalled for its column type, length-prefixed.
func (t *Table) EncodeKey(key []any) ([]byte, error) {
	cols := t.KeyColumns()
	if len(key) != len(cols) {
		return nil, tableErr(ErrMissingKey, t, "", fmt.Sprintf("%d key values for %d key columns", len(key), len(cols)))
	}
	var out []byte
	for i, c := range cols {
		b, err := marshal(c.Type, key[i])
		if err != nil {
			return nil, tableErr(ErrBadValue, t, c.Name, err.Error())
		}
		out = append(out, byte(len(b)>>24), byte(len(b)>>16), byte(len(b)>>8), byte(len(b)))
		out = append(out, b...)
	}
	return out, nil
}
