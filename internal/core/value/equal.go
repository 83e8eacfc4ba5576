// Package value compares CQL values as Go holds them, whichever driver scanned them.
package value

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Equal reports whether two values gocql scanned (or a caller bound) are the same CQL
// value. reflect.DeepEqual is not enough: gocql decodes varint and decimal map keys and
// set elements as pointers (*big.Int, *inf.Dec), which never compare equal as keys, and
// Go maps have no order. Equal compares canonical forms: pointers followed, maps and
// sets compared as sorted entries, numbers by their decimal text.
func Equal(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	return canon(reflect.ValueOf(a)) == canon(reflect.ValueOf(b))
}

func canon(v reflect.Value) string {
	if !v.IsValid() {
		return "null"
	}
	if s, ok := v.Interface().(fmt.Stringer); ok && v.Kind() == reflect.Pointer && !v.IsNil() {
		return "s:" + s.String() // *big.Int, *inf.Dec and the like
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "null"
		}
		return canon(v.Elem())
	case reflect.Map:
		if v.Len() == 0 {
			return "null" // an empty collection is NULL in Cassandra
		}
		entries := make([]string, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			entries = append(entries, canon(it.Key())+"=>"+canon(it.Value()))
		}
		sort.Strings(entries)
		return "{" + strings.Join(entries, ",") + "}"
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return fmt.Sprintf("b:%x", v.Bytes())
		}
		if v.Len() == 0 {
			return "null"
		}
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = canon(v.Index(i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return "s:" + s.String()
	}
	return fmt.Sprintf("%T:%v", v.Interface(), v.Interface())
}
