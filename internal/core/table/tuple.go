package table

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
)

// Tuples. gocql v1.7.0 cannot bind a tuple to one bind marker: it counts a tuple
// marker of a prepared statement as one value per element (so a statement with one
// tuple marker "expects" more values than it has markers) and then marshals value i
// with marker i's type, past the last marker. A tuple column is therefore written as a
// tuple literal of one marker per element, "(?, ?)", each bound to an element. An
// element can be NULL, but not UNSET (Cassandra refuses an unset tuple field): a row
// that does not give a tuple column leaves it out of the INSERT instead (InsertRow).

// marker is the bind marker text of a column of type tt: "?", or for a tuple one
// marker per element, in parentheses (nested tuples alike).
func marker(tt cqltype.Type) string {
	if tt.Kind != cqltype.Tuple {
		return "?"
	}
	parts := make([]string, len(tt.Params))
	for i, e := range tt.Params {
		parts[i] = marker(e)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// isTuple reports a column written as a tuple literal.
func (c *Column[TI]) isTuple() bool { return c.marker != "" && c.marker != "?" }

// appendArgs appends what c's marker binds for v: v itself, or a tuple's elements.
func (t *Table[TI]) appendArgs(dst []any, tt cqltype.Type, v any) ([]any, error) {
	if tt.Kind != cqltype.Tuple {
		return append(dst, v), nil
	}
	elems, err := t.tupleElems(tt, v)
	if err != nil {
		return dst, err
	}
	for i, e := range tt.Params {
		el := elems[i]
		if el == nil && (e.Kind == cqltype.UDT || e.Kind == cqltype.Vector) {
			// A NULL UDT or vector element is bound as the driver's empty serialised
			// value: the drivers refuse to marshal a plain nil as either. Other NULL
			// elements stay nil (the outbox records nil, not a value that marshals
			// itself).
			el = t.drv.RawOf(nil)
		}
		if dst, err = t.appendArgs(dst, e, el); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// tupleElems splits a tuple value into its elements. It takes what the drivers marshal
// as a tuple — a slice or array of the elements, a struct with one field per element in
// order, a pointer to one — and the serialised form (the driver's Raw). nil is a tuple of
// NULL elements.
func (t *Table[TI]) tupleElems(tt cqltype.Type, v any) ([]any, error) {
	n := len(tt.Params)
	out := make([]any, n)
	if raw, ok := t.drv.Raw(v); ok {
		for i := 0; i < n && len(raw) > 0; i++ {
			if len(raw) < 4 {
				return nil, fmt.Errorf("tuple: truncated element %d", i)
			}
			l := int32(binary.BigEndian.Uint32(raw))
			raw = raw[4:]
			if l < 0 {
				continue // NULL element
			}
			if int(l) > len(raw) {
				return nil, fmt.Errorf("tuple: element %d of %d bytes in %d", i, l, len(raw))
			}
			out[i] = t.drv.RawOf(raw[:l:l])
			raw = raw[l:]
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return out, nil
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Invalid:
		return out, nil
	case reflect.Slice, reflect.Array:
		if rv.Len() != n {
			return nil, fmt.Errorf("tuple of %d elements given %d", n, rv.Len())
		}
		for i := range n {
			out[i] = rv.Index(i).Interface()
		}
	case reflect.Struct:
		if rv.NumField() != n {
			return nil, fmt.Errorf("tuple of %d elements given a struct of %d fields", n, rv.NumField())
		}
		for i := range n {
			if !rv.Type().Field(i).IsExported() {
				return nil, fmt.Errorf("tuple given a struct with unexported field %s", rv.Type().Field(i).Name)
			}
			out[i] = rv.Field(i).Interface()
		}
	default:
		return nil, fmt.Errorf("%T is not a tuple (want a slice, array or struct)", v)
	}
	for i, e := range out {
		if t.normalize(e) == nil {
			out[i] = nil // NULL element: an element cannot be UNSET
		}
	}
	return out, nil
}

// Args returns what to bind, in order, for the markers of the named columns (as the
// builders write them) given their values: each value itself, or for a tuple column
// its elements (a tuple is written as a literal of one marker per element). Values
// that Values or KeyValues returned, or that were scanned, fit. An unknown column is
// ErrUnknownColumn; a tuple value that does not split is ErrBadValue.
func (t *Table[TI]) Args(columns []string, values []any) ([]any, error) {
	if len(columns) != len(values) {
		return nil, errorFor(ErrBadValue, t, "", fmt.Sprintf("%d values for %d columns", len(values), len(columns)))
	}
	out := make([]any, 0, len(values)+2)
	for i, name := range columns {
		j, ok := t.byName[name]
		if !ok {
			return nil, errorFor(ErrUnknownColumn, t, name, "")
		}
		var err error
		if out, err = t.appendArgs(out, t.columns[j].tree, values[i]); err != nil {
			return nil, errorFor(ErrBadValue, t, name, err.Error())
		}
	}
	return out, nil
}

// KeyArgs is Args of the primary key columns: what DeleteRow, SelectByKey and Update
// bind for their WHERE clause (DeletePartition: the first len(PartitionKey)). key is as
// KeyValues returns it.
func (t *Table[TI]) KeyArgs(key []any) ([]any, error) {
	if len(key) > t.keyLen() {
		return nil, errorFor(ErrMissingKey, t, "", fmt.Sprintf("%d key values for %d key columns", len(key), t.keyLen()))
	}
	if !t.tupleKey {
		return key, nil
	}
	out := make([]any, 0, len(key)+2)
	for i, v := range key {
		var err error
		if out, err = t.appendArgs(out, t.columns[i].tree, v); err != nil {
			return nil, errorFor(ErrBadValue, t, t.columns[i].Name, err.Error())
		}
	}
	return out, nil
}

// InsertRow returns the INSERT for one row's values (as Values returns them, in
// Columns order) and the values to bind to it, with room for the TTL and timestamp u
// asks for, which the caller appends. On a table without tuple columns that is
// Insert(u) and values unchanged. A tuple column the row does not give (UNSET) is left
// out of the INSERT — writing nothing, as UNSET would — and a given one is bound
// element by element (see Args).
func (t *Table[TI]) InsertRow(u Using, values []any) (string, []any, error) {
	if len(values) != len(t.columns) {
		return "", nil, errorFor(ErrBadValue, t, "", fmt.Sprintf("%d values for %d columns", len(values), len(t.columns)))
	}
	if !t.hasTuple {
		return t.Insert(u), values, nil
	}
	var names []string
	args := make([]any, 0, len(values)+2)
	for i := range t.columns {
		c := &t.columns[i]
		if c.isTuple() && values[i] == t.unset {
			continue
		}
		names = append(names, c.Name)
		var err error
		if args, err = t.appendArgs(args, c.tree, values[i]); err != nil {
			return "", nil, errorFor(ErrBadValue, t, c.Name, err.Error())
		}
	}
	cql, err := t.memoized(memoInsert+memoKind(u&(UsingTTL|UsingTimestamp)), CellValue, names, func(string) string {
		return t.insertOf(names, u)
	})
	return cql, args, err
}
