package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gocql/gocql"
	gocqlxtable "github.com/scylladb/gocqlx/v2/table"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	core "github.com/cqlsafe/cqlsafe/internal/core/table"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// Describe reads the table's metadata from the session: partition key, clustering
// columns, regular and static columns and their types, and the Cassandra version of
// the cluster's oldest node (CassandraVersion), which the builders adapt to. An unknown keyspace or table is
// ErrUnknownTable; an invalid name is ErrInvalidName. Names are taken as Cassandra
// stores them (case-sensitive, unquoted).
//
// gocql learns of a table created moments ago only after a schema change event (about a
// second, debounced): Describe looks again for up to 3 seconds before calling a table
// unknown.
func Describe(ctx context.Context, s *gocql.Session, keyspace, name string) (*Table, error) {
	var src core.Source[gocql.TypeInfo]
	if s != nil {
		src = source{s}
	}
	return core.Describe[gocql.TypeInfo](ctx, driver{}, src, keyspace, name)
}

// source reads a table's metadata through a gocql v1.7 session for core.Describe.
type source struct{ s *gocql.Session }

func (src source) Lookup(keyspace, name string) (cols []core.ColumnDef[gocql.TypeInfo], hasUDTs, found, noKeyspace bool, err error) {
	tm, ok, err := cqlvalue.Table(src.s, keyspace, name)
	switch {
	case !ok && errors.Is(err, gocql.ErrKeyspaceDoesNotExist):
		return nil, false, false, true, nil
	case !ok:
		return nil, false, false, false, err
	}
	km, _ := cqlvalue.KeyspaceMetadata(src.s, keyspace) // its user types, where it lists them
	if km == nil {
		km = &gocql.KeyspaceMetadata{Name: keyspace}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	udts, err := cqlvalue.UserTypes(ctx, src.s, km)
	if err != nil {
		return nil, false, false, false, err
	}
	return columnDefs(tm), udts, true, false, nil
}

func (src source) Query(ctx context.Context, cql string, args, dest []any, row func()) error {
	// ONE, whatever the session's default (ANY cannot read): system tables are local.
	iter := src.s.Query(cql, args...).WithContext(ctx).Consistency(gocql.One).Idempotent(true).Iter()
	for iter.Scan(dest...) {
		row()
	}
	return iter.Close()
}

// GocqlxModel is a gocqlx table model: gocqlx/v2's table.Metadata, and gocqlx/v3's
// (which gocqlx users on the ScyllaDB fork have) — the same fields.
type GocqlxModel interface {
	~struct {
		Name    string
		Columns []string
		PartKey []string
		SortKey []string
	}
}

// DescribeGocqlx is Describe for callers who already describe tables with gocqlx (v2 or
// v3 table.Metadata): it reads the table from the session and checks that m's partition
// key, sort key and columns match it (ErrMetadataMismatch otherwise). m.Name may be
// "keyspace.table".
func DescribeGocqlx[M GocqlxModel](ctx context.Context, s *gocql.Session, keyspace string, model M) (*Table, error) {
	m := gocqlxtable.Metadata(model)
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
		return nil, mismatch(t, "", fmt.Sprintf("partition key %v, table has %v", m.PartKey, names(t.PartitionKey)))
	}
	if !slices.Equal(m.SortKey, names(t.Clustering)) {
		return nil, mismatch(t, "", fmt.Sprintf("sort key %v, table has %v", m.SortKey, names(t.Clustering)))
	}
	for _, c := range m.Columns {
		if _, ok := t.Column(c); !ok {
			return nil, mismatch(t, c, "column not in the table")
		}
	}
	return t, nil
}

// FromMetadata builds a Table from gocql's metadata of it, as Describe does after
// reading it from the session: for callers that hold the metadata already, and for
// tests that need a Table without Cassandra. Without the session it cannot read the
// keyspace's user-defined types: a UDT column keeps gocql's custom() type, to which no
// value can be bound (use Describe). Nor does it know the cluster's version: the
// builders assume Cassandra 5.0 or later (use Describe on an older cluster).
func FromMetadata(tm *gocql.TableMetadata) (*Table, error) {
	return fromMetadata(tm, nil, "")
}

func mismatch(t *Table, column, detail string) *Error {
	return &Error{Err: ErrMetadataMismatch, Keyspace: t.Keyspace, Table: t.Name, Column: column, Row: -1, Detail: detail}
}

// fromMetadata builds the Table of gocql's metadata: each column's type from its type
// text and the keyspace's user types, gocql's own TypeInfo where the text does not
// parse (a user type not given).
func fromMetadata(tm *gocql.TableMetadata, udts map[string]cqltype.UserType, release string) (*Table, error) {
	if tm == nil {
		return nil, &Error{Err: ErrUnknownTable, Row: -1, Detail: "nil table metadata"}
	}
	return core.Build[gocql.TypeInfo](driver{}, tm.Keyspace, tm.Name, columnDefs(tm), udts, release)
}

func columnDefs(tm *gocql.TableMetadata) []core.ColumnDef[gocql.TypeInfo] {
	var cols []core.ColumnDef[gocql.TypeInfo]
	add := func(cm *gocql.ColumnMetadata, role ColumnRole) {
		var ti gocql.TypeInfo // v1.7's own; the fork's metadata has the text alone
		if t := cqlvalue.ColumnTypeInfo(cm); t != nil {
			ti = withProto(t)
		}
		cols = append(cols, core.ColumnDef[gocql.TypeInfo]{Name: cm.Name, Role: role, Validator: cqlvalue.ColumnTypeText(cm), Type: ti})
	}
	for _, cm := range tm.PartitionKey {
		add(cm, PartitionKey)
	}
	for _, cm := range tm.ClusteringColumns {
		add(cm, ClusteringKey)
	}
	for _, cm := range tm.Columns {
		switch cm.Kind {
		case gocql.ColumnRegular, gocql.ColumnCompact:
			add(cm, Regular)
		case gocql.ColumnStatic:
			add(cm, Static)
		}
	}
	return cols
}
