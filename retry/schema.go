package retry

import (
	"math/big"
	"reflect"

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// SessionSchema answers column kinds from s's schema metadata (gocql's keyspace
// metadata: read once per keyspace, dropped by gocql when a schema change event
// arrives). With it, a Policy judges a bind marker by the type of the column it is bound
// to: `SET l = ?` is not idempotent when l is a non-frozen list and is when l is a
// frozen list, a set, a map or a scalar.
//
// Frozen collections, tuples and UDTs report ColumnScalar (one cell, overwritten
// whole); unknown keyspaces, tables and columns report ColumnUnknown.
func SessionSchema(s *gocql.Session) Schema {
	if s == nil {
		return nil
	}
	return sessionSchema{s: s}
}

type sessionSchema struct{ s *gocql.Session }

func (x sessionSchema) table(keyspace, table string) *gocql.TableMetadata {
	if keyspace == "" || table == "" {
		return nil
	}
	tm, _, _ := cqlvalue.Table(x.s, keyspace, table)
	return tm
}

// ColumnKind implements Schema.
func (x sessionSchema) ColumnKind(keyspace, table, column string) ColumnKind {
	tm := x.table(keyspace, table)
	if tm == nil {
		return ColumnUnknown
	}
	cm, ok := tm.Columns[column]
	if !ok || cm == nil {
		return ColumnUnknown
	}
	return kindOf(cm)
}

// ColumnRole implements RoleSchema.
func (x sessionSchema) ColumnRole(keyspace, table, column string) ColumnRole {
	tm := x.table(keyspace, table)
	if tm == nil {
		return RoleUnknown
	}
	cm, ok := tm.Columns[column]
	if !ok || cm == nil {
		return RoleUnknown
	}
	switch cm.Kind {
	case gocql.ColumnPartitionKey:
		return RolePartitionKey
	case gocql.ColumnClusteringKey:
		return RoleClustering
	case gocql.ColumnRegular:
		return RoleRegular
	case gocql.ColumnStatic:
		return RoleStatic
	}
	return RoleUnknown
}

// ClusteringColumns implements ClusteringSchema: the table's clustering columns, in
// order.
func (x sessionSchema) ClusteringColumns(keyspace, table string) ([]string, bool) {
	tm := x.table(keyspace, table)
	if tm == nil {
		return nil, false
	}
	out := make([]string, 0, len(tm.ClusteringColumns))
	for _, cm := range tm.ClusteringColumns {
		if cm == nil {
			return nil, false
		}
		out = append(out, cm.Name)
	}
	return out, true
}

// KeyType implements verdict.KeyTypeSchema: the types for which a literal key and a
// bound one can be told equal, read from the column's type text.
func (x sessionSchema) KeyType(keyspace, table, column string) KeyType {
	tm := x.table(keyspace, table)
	if tm == nil {
		return KeyOther
	}
	cm, ok := tm.Columns[column]
	if !ok || cm == nil {
		return KeyOther
	}
	return verdict.KeyTypeOfType(cqlvalue.ColumnTypeText(cm))
}

// kindOf reads a column's kind from its type text (system_schema's), by the rule the v2
// adapter uses too (verdict.ColumnKindOfType): a non-frozen collection by its outermost
// type, whatever its elements.
func kindOf(cm *gocql.ColumnMetadata) ColumnKind {
	return verdict.ColumnKindOfType(cqlvalue.ColumnTypeText(cm))
}

func (x sessionSchema) ListColumns(keyspace, table string) (map[string]bool, bool) {
	tm := x.table(keyspace, table)
	if tm == nil {
		return nil, false
	}
	out := map[string]bool{}
	for name, cm := range tm.Columns {
		if cm != nil && kindOf(cm) == ColumnList {
			out[name] = true
		}
	}
	return out, true
}

// Generation identifies the metadata a verdict was judged against: gocql replaces a
// keyspace's *KeyspaceMetadata when its schema changes.
func (x sessionSchema) Generation(keyspace string) any {
	km, err := cqlvalue.KeyspaceMetadata(x.s, keyspace)
	if err != nil {
		return nil
	}
	return km
}

// isNilRecorder reports a typed nil pointer in a Recorder interface.
func isNilRecorder(r Recorder) bool {
	if r == nil {
		return true
	}
	v := reflect.ValueOf(r)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

var namedValueType = reflect.TypeOf(gocql.NamedValue("", nil))

// gocqlValues is what gocql v1.7 tells the verdict about bound values: its UNSET marker
// writes nothing; a gocql.Marshaler may marshal a list, except gocql's own UUID and
// Duration.
type gocqlValues struct{}

func (gocqlValues) IsUnset(v any) bool { return v == gocql.UnsetValue }

// Decimal reads what gocql marshals into a decimal: an inf.Dec, or a non-nil pointer to
// one (gocql dereferences pointers), as its unscaled integer and scale.
func (gocqlValues) Decimal(v any) (*big.Int, int32, bool) {
	switch d := v.(type) {
	case inf.Dec:
		return d.UnscaledBig(), int32(d.Scale()), true
	case *inf.Dec:
		if d != nil {
			return d.UnscaledBig(), int32(d.Scale()), true
		}
	}
	return nil, 0, false
}

func (gocqlValues) MayMarshalList(v any) bool {
	if v != nil && reflect.TypeOf(v) == namedValueType {
		// gocql.NamedValue: the driver matches it to a marker by name, and its value
		// is out of reach; it may be a list.
		return true
	}
	switch v.(type) {
	case gocql.UUID, *gocql.UUID, gocql.Duration, *gocql.Duration:
		return false
	}
	_, ok := v.(gocql.Marshaler)
	return ok
}
