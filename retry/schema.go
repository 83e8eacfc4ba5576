package retry

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/gocql/gocql"
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
	km, err := x.s.KeyspaceMetadata(keyspace)
	if err != nil || km == nil {
		return nil
	}
	return km.Tables[table]
}

// ColumnKind implements Schema.
func (x sessionSchema) ColumnKind(keyspace, table, column string) ColumnKind {
	tm := x.table(keyspace, table)
	if tm == nil {
		return ColumnUnknown
	}
	cm, ok := tm.Columns[column]
	if !ok || cm == nil || cm.Type == nil {
		return ColumnUnknown
	}
	return kindOf(cm)
}

func kindOf(cm *gocql.ColumnMetadata) ColumnKind {
	frozen := strings.HasPrefix(strings.ToLower(cm.Validator), "frozen<")
	switch cm.Type.Type() {
	case gocql.TypeCounter:
		return ColumnCounter
	case gocql.TypeList:
		if !frozen {
			return ColumnList
		}
	case gocql.TypeSet:
		if !frozen {
			return ColumnSet
		}
	case gocql.TypeMap:
		if !frozen {
			return ColumnMap
		}
	}
	return ColumnScalar
}

func (x sessionSchema) listColumns(keyspace, table string) (map[string]bool, bool) {
	tm := x.table(keyspace, table)
	if tm == nil {
		return nil, false
	}
	out := map[string]bool{}
	for name, cm := range tm.Columns {
		if cm != nil && cm.Type != nil && kindOf(cm) == ColumnList {
			out[name] = true
		}
	}
	return out, true
}

// generation identifies the metadata a verdict was judged against: gocql replaces a
// keyspace's *KeyspaceMetadata when its schema changes.
func (x sessionSchema) generation(keyspace string) any {
	km, err := x.s.KeyspaceMetadata(keyspace)
	if err != nil {
		return nil
	}
	return km
}

// generationer is implemented by schemas whose answers can change (SessionSchema).
type generationer interface{ generation(keyspace string) any }

// forValues judges one execution of the verdict's statement with these bound values: a
// non-empty list bound whole to a non-frozen list column (or, without schema, a
// non-empty slice bound to a column of unknown type) makes it not idempotent.
func (v Verdict) forValues(values []any) Verdict {
	if !v.Idempotent || len(v.binds) == 0 {
		return v
	}
	for _, b := range v.binds {
		if b.index >= len(values) {
			// No value to judge (a binder function, or values still to come): a marker
			// that decides idempotence makes the execution not repeatable.
			v = v.withReason(v.Reasons, fmt.Sprintf("no value to judge for bind marker %d, which may be bound to a non-frozen list", b.index+1))
			continue
		}
		val := values[b.index]
		switch {
		case b.json:
			doc, ok := jsonText(val)
			if !ok {
				continue
			}
			if col, bad := jsonListAssignment(doc, b.listCols); bad {
				v = v.withReason(v.Reasons, "INSERT JSON value assigns a list to "+quoteName(col)+", which is (or may be) a non-frozen list (a repeat appends another copy)")
			}
		case b.known && nonEmptyValue(val):
			v = v.withReason(v.Reasons, "non-empty value bound to non-frozen list "+quoteName(b.column)+" (Cassandra keys list elements by server time: a repeat appends another copy)")
		case !b.known && listLike(val):
			v = v.withReason(v.Reasons, "non-empty list bound to "+quoteName(b.column)+", which may be a non-frozen list (a repeat appends another copy; give the Policy the schema: WithSchema(SessionSchema(s)))")
		}
	}
	return v
}

// withReason returns a copy of v marked not idempotent, without sharing the cached
// verdict's Reasons slice.
func (v Verdict) withReason(reasons []string, r string) Verdict {
	v.Reasons = append(append([]string(nil), reasons...), r)
	v.Idempotent = false
	return v
}

func quoteName(s string) string { return `"` + s + `"` }

func jsonText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case *string:
		if x != nil {
			return *x, true
		}
	}
	return "", false
}

// nonEmptyValue: anything but nil, UNSET, nil pointers and empty slices/maps writes
// list elements.
func nonEmptyValue(v any) bool {
	if v == nil || v == gocql.UnsetValue {
		return false
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return false
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() > 0
	}
	return true
}

// listLike: a non-empty slice or array that is not bytes (blobs, UUIDs, inet), or a
// value with its own CQL marshalling (gocql.Marshaler), which may marshal a list.
func listLike(v any) bool {
	if v == nil || v == gocql.UnsetValue {
		return false
	}
	if _, ok := v.(gocql.Marshaler); ok && !knownMarshaler(v) {
		return true
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return false
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return rv.Len() > 0 && rv.Type().Elem().Kind() != reflect.Uint8
	}
	return false
}

// ValueConditions lists, one line each, the bind markers whose value decides whether an
// Idempotent verdict holds for an execution: a non-empty list bound to a non-frozen list
// column (or, without schema, to a column that may be one) makes it not repeatable. A
// linter that has no values reports them; Policy.Repeatable applies them to the values.
func (v Verdict) ValueConditions() []string {
	var out []string
	for _, b := range v.binds {
		switch {
		case b.json:
			out = append(out, fmt.Sprintf("bind marker %d: an INSERT JSON document with a non-empty array for a non-frozen list column is not repeatable", b.index+1))
		case b.known:
			out = append(out, fmt.Sprintf("bind marker %d: a non-empty list bound to non-frozen list %q is not repeatable (each repeat appends another copy)", b.index+1, b.column))
		default:
			out = append(out, fmt.Sprintf("bind marker %d: a non-empty list bound to %q is not repeatable if it is a non-frozen list (schema metadata can tell)", b.index+1, b.column))
		}
	}
	return out
}

// isNilRecorder reports a typed nil pointer in a Recorder interface.
func isNilRecorder(r Recorder) bool {
	if r == nil {
		return true
	}
	v := reflect.ValueOf(r)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// knownMarshaler: gocql's own value types that marshal themselves and are never lists.
func knownMarshaler(v any) bool {
	switch v.(type) {
	case gocql.UUID, *gocql.UUID, gocql.Duration, *gocql.Duration:
		return true
	}
	return false
}
