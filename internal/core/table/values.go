package table

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
)

// Values turns a row into one value per column, in Columns order, ready to bind to
// Insert. row is a map[string]any keyed by column name, or a struct (or pointer to one)
// whose fields map to columns as in gocqlx: the `db` tag names the column (`db:"-"`
// skips the field), an untagged exported field maps to its name in snake_case, embedded
// structs contribute their fields.
//
// A column the row does not give, or gives as nil (a typed nil pointer, slice or map
// included, or the driver's UnsetValue), or as an empty non-frozen collection, is the
// driver's UnsetValue: binding it writes nothing, where NULL would write a tombstone (and
// Cassandra stores an empty non-frozen collection as NULL). Zero values (0, false, "")
// are real values and are kept. Every primary key column must be given (ErrMissingKey);
// unknown columns (ErrUnknownColumn) and values that do not fit the column's type
// (ErrBadValue) are errors. Nothing is sent.
//
// The slice has room for two more values (the TTL and timestamp Insert binds last).
func (t *Table[TI]) Values(row any) ([]any, error) {
	n := len(t.columns)
	dst := make([]any, n, n+2)
	unset := t.unset
	for i := range dst {
		dst[i] = unset
	}
	set := func(name string, v any) error {
		i, ok := t.byName[name]
		if !ok {
			return errorFor(ErrUnknownColumn, t, name, "")
		}
		v = t.normalize(v)
		if v == nil {
			return nil
		}
		c := &t.columns[i]
		if c.Collection && isEmptyCollection(v) {
			return nil // an empty non-frozen collection is NULL in Cassandra
		}
		if err := t.drv.Fits(c.Type, c.native(), v); err != nil {
			return errorFor(ErrBadValue, t, name, fmt.Sprintf("%T for %s: %v", v, c.CQLType, err))
		}
		v, err := t.drv.Bind(c.Type, v)
		if err != nil {
			return errorFor(ErrBadValue, t, name, fmt.Sprintf("%T for %s: %v", v, c.CQLType, err))
		}
		dst[i] = v
		return nil
	}
	switch r := row.(type) {
	case nil:
		return nil, errorFor(ErrNotARow, t, "", "nil")
	case map[string]any:
		for name, v := range r {
			if err := set(name, v); err != nil {
				return nil, err
			}
		}
	default:
		rv := reflect.ValueOf(row)
		for rv.Kind() == reflect.Pointer {
			if rv.IsNil() {
				return nil, errorFor(ErrNotARow, t, "", "nil pointer")
			}
			rv = rv.Elem()
		}
		if rv.Kind() != reflect.Struct {
			return nil, errorFor(ErrNotARow, t, "", fmt.Sprintf("%T: want map[string]any or a struct with db tags", row))
		}
		for _, f := range fieldsOf(rv.Type()) {
			fv, ok := fieldByIndex(rv, f.index)
			if !ok {
				continue // nil embedded pointer: its fields are absent
			}
			if err := set(f.column, fv.Interface()); err != nil {
				return nil, err
			}
		}
	}
	for i := range t.keyLen() {
		if dst[i] == unset {
			return nil, errorFor(ErrMissingKey, t, t.columns[i].Name, "")
		}
	}
	return dst, nil
}

// KeyValues extracts and validates the primary key of row (a map or struct, as Values
// takes it): partition key then clustering columns, in key order. Other columns the row
// gives are checked (known, right type) but not returned. Missing or nil key columns
// are ErrMissingKey.
func (t *Table[TI]) KeyValues(row any) ([]any, error) {
	vals, err := t.Values(row)
	if err != nil {
		return nil, err
	}
	return vals[:t.keyLen():t.keyLen()], nil
}

// normalize maps "no value" forms to nil: nil, the driver's UnsetValue, nil pointers,
// nil slices and maps, also behind pointers (gocql binds a *[]T pointing to a nil
// slice as NULL). Other values pass unchanged.
func (t *Table[TI]) normalize(v any) any {
	if v == nil || v == t.unset {
		return nil
	}
	if t.drv.Marshaler(v) {
		return v // it says what it binds (Raw: nil is NULL, kept nil below)
	}
	rv := reflect.ValueOf(v)
	for {
		switch rv.Kind() {
		case reflect.Slice, reflect.Map:
			if rv.IsNil() {
				return nil
			}
			return v
		case reflect.Pointer, reflect.Interface:
			if rv.IsNil() {
				return nil
			}
			rv = rv.Elem()
			continue
		}
		return v
	}
}

func isEmptyCollection(v any) bool {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() == 0
	}
	return false
}

type fieldPlan struct {
	column string
	index  []int
}

// fieldCache is a cache of immutable, derived data (a struct type's column plan), not
// settings: reflect.Type → []fieldPlan.
var fieldCache sync.Map

// fieldsOf lists a struct's columns the gocqlx way: the `db` tag names the column
// (`db:"-"` skips the field), an untagged exported field maps to its name in
// snake_case, embedded structs contribute their fields.
func fieldsOf(t reflect.Type) []fieldPlan {
	if v, ok := fieldCache.Load(t); ok {
		return v.([]fieldPlan)
	}
	var plans []fieldPlan
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), prefix...), i)
			tag, hasTag := f.Tag.Lookup("db")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			ft := f.Type
			if f.Anonymous && !hasTag {
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, idx)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = snakeCase(f.Name)
			}
			plans = append(plans, fieldPlan{column: name, index: idx})
		}
	}
	walk(t, nil)
	fieldCache.Store(t, plans)
	return plans
}

func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 {
			for v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return reflect.Value{}, false
				}
				v = v.Elem()
			}
		}
		v = v.Field(x)
	}
	return v, true
}

// snakeCase is gocqlx's default field-name mapping (reflectx CamelToSnakeASCII):
// "UserID" → "user_id", "FirstName" → "first_name".
func snakeCase(s string) string {
	var b strings.Builder
	runes := []rune(s)
	for i, r := range runes {
		if unicode.IsUpper(r) {
			if i > 0 && runes[i-1] != '_' && (unicode.IsLower(runes[i-1]) || (i+1 < len(runes) && unicode.IsLower(runes[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
