package overwrite

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/gocql/gocql"
)

// absent marks a column the row does not give (or gives as nil): after the overwrite it
// is NULL — made so by the delete, never by binding NULL.
var absent any = gocql.UnsetValue

// rowValues turns a row (map[string]any, or a struct or pointer to one with `db` tags)
// into one value per table column, in INSERT order, with absent columns set to
// gocql.UnsetValue. It checks names, keys and value types; nothing is sent.
func (t *Table) rowValues(row any, rowIndex int, dst []any) ([]any, error) {
	dst = dst[:0]
	for range t.columns {
		dst = append(dst, absent)
	}
	bad := func(sentinel error, column, detail string) error {
		e := tableErr(sentinel, t, column, detail)
		e.Row = rowIndex
		return e
	}
	set := func(name string, v any) error {
		i, ok := t.byName[name]
		if !ok {
			return bad(ErrUnknownColumn, name, "")
		}
		v = normalize(v)
		if v == nil {
			return nil
		}
		c := &t.columns[i]
		if c.Collection && isEmptyCollection(v) {
			return nil // an empty non-frozen collection is NULL in Cassandra
		}
		if err := fits(c.Type, v); err != nil {
			return bad(ErrBadValue, name, fmt.Sprintf("%T for %s: %v", v, c.CQLType, err))
		}
		dst[i] = v
		return nil
	}
	switch r := row.(type) {
	case nil:
		return nil, bad(ErrNotARow, "", "nil")
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
				return nil, bad(ErrNotARow, "", "nil pointer")
			}
			rv = rv.Elem()
		}
		if rv.Kind() != reflect.Struct {
			return nil, bad(ErrNotARow, "", fmt.Sprintf("%T: want map[string]any or a struct with db tags", row))
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
	for _, group := range [][]Column{t.PartitionKey, t.Clustering} {
		for _, c := range group {
			if dst[c.index] == absent {
				return nil, bad(ErrMissingKey, c.Name, "")
			}
		}
	}
	return dst, nil
}

// normalize maps "no value" forms to nil: nil, gocql.UnsetValue, nil pointers, nil
// slices and maps. Other values pass unchanged.
func normalize(v any) any {
	if v == nil || v == absent {
		return nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
	}
	return v
}

func isEmptyCollection(v any) bool {
	rv := reflect.ValueOf(v)
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

var fieldCache sync.Map // reflect.Type → []fieldPlan

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
