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

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
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
	if err := cqltext.ValidName(keyspace); err != nil {
		return nil, &Error{Err: ErrInvalidName, Keyspace: keyspace, Table: name, Row: -1, Detail: err.Error()}
	}
	if err := cqltext.ValidName(name); err != nil {
		return nil, &Error{Err: ErrInvalidName, Keyspace: keyspace, Table: name, Row: -1, Detail: err.Error()}
	}
	if s == nil {
		return nil, errors.New("table: nil session")
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
		missing := &Error{Err: ErrUnknownTable, Keyspace: keyspace, Table: name, Row: -1}
		switch {
		case errors.Is(err, gocql.ErrKeyspaceDoesNotExist):
			missing.Detail = "keyspace does not exist"
		case err != nil:
			return nil, fmt.Errorf("table: describe %s.%s: %w", keyspace, name, err)
		default:
			if tm, ok := km.Tables[name]; ok {
				var udts map[string]userType
				if len(km.UserTypes) > 0 {
					if udts, err = userTypes(ctx, s, keyspace); err != nil {
						return nil, fmt.Errorf("table: describe %s.%s: %w", keyspace, name, err)
					}
				}
				// Read once here, kept on the Table: the builders choose by it (see Cell).
				v, err := clusterVersion(ctx, s)
				if err != nil {
					return nil, fmt.Errorf("table: describe %s.%s: %w", keyspace, name, err)
				}
				t, err := fromMetadata(tm, udts)
				if err != nil {
					return nil, err
				}
				t.version = v
				return t, nil
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
// columns match it (ErrMetadataMismatch otherwise). m.Name may be "keyspace.table".
func DescribeGocqlx(ctx context.Context, s *gocql.Session, keyspace string, m gocqlxtable.Metadata) (*Table, error) {
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
		return nil, errorFor(ErrMetadataMismatch, t, "", fmt.Sprintf("partition key %v, table has %v", m.PartKey, names(t.PartitionKey)))
	}
	if !slices.Equal(m.SortKey, names(t.Clustering)) {
		return nil, errorFor(ErrMetadataMismatch, t, "", fmt.Sprintf("sort key %v, table has %v", m.SortKey, names(t.Clustering)))
	}
	for _, c := range m.Columns {
		if _, ok := t.byName[c]; !ok {
			return nil, errorFor(ErrMetadataMismatch, t, c, "column not in the table")
		}
	}
	return t, nil
}

// userTypes reads the keyspace's user-defined types with their fields' type texts:
// gocql v1.7.0's KeyspaceMetadata.UserTypes has the fields, but a field of a user type
// is custom() there, its name lost.
func userTypes(ctx context.Context, s *gocql.Session, keyspace string) (map[string]userType, error) {
	iter := s.Query("SELECT type_name, field_names, field_types FROM system_schema.types WHERE keyspace_name = ?", keyspace).
		WithContext(ctx).Idempotent(true).Iter()
	out := map[string]userType{}
	var name string
	var ut userType
	for iter.Scan(&name, &ut.Fields, &ut.Types) {
		out[name] = ut
		ut = userType{}
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("read user types: %w", err)
	}
	return out, nil
}

// FromMetadata builds a Table from gocql's metadata of it, as Describe does after
// reading it from the session: for callers that hold the metadata already, and for
// tests that need a Table without Cassandra. Without the session it cannot read the
// keyspace's user-defined types: a UDT column keeps gocql's custom() type, to which no
// value can be bound (use Describe). Nor does it know the cluster's version: the
// builders assume Cassandra 5.0 or later (use Describe on an older cluster).
func FromMetadata(tm *gocql.TableMetadata) (*Table, error) {
	return fromMetadata(tm, nil)
}

func fromMetadata(tm *gocql.TableMetadata, udts map[string]userType) (*Table, error) {
	if tm == nil {
		return nil, errorFor(ErrUnknownTable, nil, "", "nil table metadata")
	}
	t := &Table{Keyspace: tm.Keyspace, Name: tm.Name, byName: map[string]int{}, memo: &memo{}}
	parser := &typeParser{keyspace: tm.Keyspace, udts: udts}
	conv := func(cm *gocql.ColumnMetadata, role ColumnRole) Column {
		ti := withProto(cm.Type)
		// gocql's own parse leaves UDTs and vectors as custom: parse the type text.
		if parsed, err := parser.parse(cm.Validator); err == nil {
			ti = parsed
		}
		c := Column{Name: cm.Name, Role: role, Type: ti, CQLType: cm.Validator}
		c.marker = marker(ti)
		if ti != nil {
			switch ti.Type() {
			// A non-frozen UDT is multi-cell too (a cell per field): WRITETIME and TTL
			// of it are lists, as of a collection.
			case gocql.TypeList, gocql.TypeSet, gocql.TypeMap, gocql.TypeUDT:
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
		switch cm.Kind {
		case gocql.ColumnRegular, gocql.ColumnCompact:
			t.Regular = append(t.Regular, conv(cm, Regular))
		case gocql.ColumnStatic:
			t.Static = append(t.Static, conv(cm, Static))
		}
	}
	if len(t.PartitionKey) == 0 {
		return nil, errorFor(ErrUnknownTable, t, "", "table metadata has no partition key")
	}
	for _, group := range [][]Column{t.PartitionKey, t.Clustering, t.Static, t.Regular} {
		for i := range group {
			group[i].index = len(t.columns)
			if group[i].isTuple() {
				t.hasTuple = true
				t.tupleKey = t.tupleKey || group[i].Role == PartitionKey || group[i].Role == ClusteringKey
			}
			t.byName[group[i].Name] = group[i].index
			t.columns = append(t.columns, group[i])
		}
	}
	t.stmts = buildStatements(t)
	return t, nil
}
