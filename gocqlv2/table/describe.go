package table

import (
	"context"
	"errors"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	core "github.com/cqlsafe/cqlsafe/internal/core/table"
)

// Describe reads the table's metadata from the session: partition key, clustering
// columns, regular and static columns and their types, and the Cassandra version of the
// cluster's oldest node (CassandraVersion), which the builders adapt to. An unknown
// keyspace or table is ErrUnknownTable; an invalid name is ErrInvalidName. Names are
// taken as Cassandra stores them (case-sensitive, unquoted).
//
// The driver learns of a table created moments ago only after a schema change event
// (about a second, debounced): Describe looks again for up to 3 seconds before calling a
// table unknown.
func Describe(ctx context.Context, s *gocql.Session, keyspace, name string) (*Table, error) {
	var src core.Source[gocql.TypeInfo]
	if s != nil {
		src = source{s}
	}
	return core.Describe[gocql.TypeInfo](ctx, driver{}, src, keyspace, name)
}

// FromMetadata builds a Table from the driver's metadata of it, as Describe does after
// reading it from the session, for callers that hold the metadata already and for tests
// without Cassandra. Without the session it knows neither the keyspace's user-defined
// types (a UDT column keeps the driver's type, to which no value can be bound: use
// Describe) nor the cluster's version (the builders assume Cassandra 5.0 or later).
func FromMetadata(tm *gocql.TableMetadata) (*Table, error) {
	return fromMetadata(tm, nil, "")
}

func fromMetadata(tm *gocql.TableMetadata, udts map[string]cqltype.UserType, release string) (*Table, error) {
	if tm == nil {
		return nil, &Error{Err: ErrUnknownTable, Row: -1, Detail: "nil table metadata"}
	}
	return core.Build[gocql.TypeInfo](driver{}, tm.Keyspace, tm.Name, columnDefs(tm), udts, release)
}

// source reads a table's metadata through a v2 session for core.Describe.
type source struct{ s *gocql.Session }

func (src source) Lookup(keyspace, name string) (cols []core.ColumnDef[gocql.TypeInfo], hasUDTs, found, noKeyspace bool, err error) {
	km, err := src.s.KeyspaceMetadata(keyspace)
	if errors.Is(err, gocql.ErrKeyspaceDoesNotExist) {
		return nil, false, false, true, nil
	}
	if err != nil {
		return nil, false, false, false, err
	}
	tm, ok := km.Tables[name]
	if !ok {
		return nil, false, false, false, nil
	}
	return columnDefs(tm), len(km.UserTypes) > 0, true, false, nil
}

func (src source) Query(ctx context.Context, cql string, args, dest []any, row func()) error {
	// ONE, whatever the session's default (ANY cannot read): system tables are local.
	iter := src.s.Query(cql, args...).Consistency(gocql.One).Idempotent(true).IterContext(ctx)
	for iter.Scan(dest...) {
		row()
	}
	return iter.Close()
}

func columnDefs(tm *gocql.TableMetadata) []core.ColumnDef[gocql.TypeInfo] {
	var cols []core.ColumnDef[gocql.TypeInfo]
	add := func(cm *gocql.ColumnMetadata, role ColumnRole) {
		cols = append(cols, core.ColumnDef[gocql.TypeInfo]{Name: cm.Name, Role: role, Validator: cm.Validator, Type: cm.Type})
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
