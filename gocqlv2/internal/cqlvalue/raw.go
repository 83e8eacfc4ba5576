// Package cqlvalue holds small helpers for values the Apache Cassandra Go driver v2
// scans and marshals (gocql v1.7's are in the root module's internal/cqlvalue).
package cqlvalue

import (
	"encoding/binary"
	"fmt"
	"reflect"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/internal/core/value"
)

// Raw is a value in its serialised form (the native protocol's bytes for its column
// type), bound and scanned as is: an empty blob stays empty, nil is NULL.
type Raw []byte

// MarshalCQL returns the bytes unchanged.
func (r Raw) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

// UnmarshalCQL keeps a copy of the bytes; an empty value stays non-nil (not NULL).
func (r *Raw) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	if data == nil {
		*r = nil
		return nil
	}
	*r = append(make(Raw, 0, len(data)), data...)
	return nil
}

// Marshal is gocql.Marshal that turns a panic inside the driver into an error.
func Marshal(ti gocql.TypeInfo, v any) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gocql cannot marshal %T: %v", v, r)
		}
	}()
	return gocql.Marshal(ti, v)
}

// Unmarshal decodes b (ti's serialised form) into the Go value the driver scans ti into
// (the type of ti.Zero()), an empty blob as []byte{} (a value), not nil (NULL); nil b
// is nil. A tuple is []any of its elements, a NULL element nil (the driver panics on
// one). A value the driver panics on otherwise — a tuple with a NULL element inside a
// collection or UDT — is kept as its bytes (Raw), which bind back unchanged: the caller
// has checked the framing and every scalar inside (internal/core/table's plausible).
func Unmarshal(ti gocql.TypeInfo, b []byte) (v any, err error) {
	if b == nil {
		return nil, nil
	}
	if tt, ok := ti.(gocql.TupleTypeInfo); ok {
		return unmarshalTuple(tt, b)
	}
	defer func() {
		if r := recover(); r != nil {
			v, err = append(Raw{}, b...), nil
		}
	}()
	if ti.Type() == gocql.TypeBlob {
		return append([]byte{}, b...), nil
	}
	z := ti.Zero()
	if z == nil {
		return nil, fmt.Errorf("no Go type for %v", ti)
	}
	p := reflect.New(reflect.TypeOf(z))
	if err := gocql.Unmarshal(ti, b, p.Interface()); err != nil {
		return nil, err
	}
	return p.Elem().Interface(), nil
}

// unmarshalTuple decodes a tuple element by element: each a 4-byte length (-1: NULL)
// and its bytes; elements missing at the end are NULL, as the native protocol allows.
func unmarshalTuple(tt gocql.TupleTypeInfo, b []byte) ([]any, error) {
	out := make([]any, len(tt.Elems))
	for i, et := range tt.Elems {
		if len(b) == 0 {
			break
		}
		if len(b) < 4 {
			return nil, fmt.Errorf("tuple: truncated element %d", i)
		}
		n := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if n < 0 {
			continue
		}
		if int64(n) > int64(len(b)) {
			return nil, fmt.Errorf("tuple: element %d of %d bytes in %d", i, n, len(b))
		}
		v, err := Unmarshal(et, b[:n])
		if err != nil {
			return nil, fmt.Errorf("tuple element %d: %w", i, err)
		}
		out[i], b = v, b[n:]
	}
	if len(b) > 0 {
		return nil, fmt.Errorf("tuple: %d bytes after the last element", len(b))
	}
	return out, nil
}

// ScanRow scans iter's next row, each column in its serialised form, and returns the
// columns' bytes (nil: NULL). The v2 driver scans a tuple column into one destination
// per element (and counts it so in Scan's arity): the response's column types say
// which, and the tuple is rebuilt from its elements (value.JoinTuple). ok is false at
// the end of the rows or on an error (iter.Close says which).
func ScanRow(iter *gocql.Iter) (cells [][]byte, ok bool) {
	cols := iter.Columns()
	parts := make([][]Raw, len(cols))
	var dest []any
	for i, c := range cols {
		n := 1
		if t, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
			n = len(t.Elems)
		}
		parts[i] = make([]Raw, n)
		for j := range parts[i] {
			dest = append(dest, &parts[i][j])
		}
	}
	if !iter.Scan(dest...) {
		return nil, false
	}
	cells = make([][]byte, len(cols))
	for i, c := range cols {
		if _, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
			elems := make([][]byte, len(parts[i]))
			for j, p := range parts[i] {
				elems[j] = p
			}
			cells[i] = value.JoinTuple(elems)
			continue
		}
		cells[i] = parts[i][0]
	}
	return cells, true
}

// Row reads iter's first row (ScanRow) and closes iter: n columns wanted; found false
// when there is no row.
func Row(iter *gocql.Iter, n int) (cells [][]byte, found bool, err error) {
	cells, found = ScanRow(iter)
	if err := iter.Close(); err != nil {
		return nil, false, err
	}
	if found && len(cells) != n {
		return nil, false, fmt.Errorf("%d columns, want %d", len(cells), n)
	}
	return cells, found, nil
}

// EachRow calls row with each of iter's rows (ScanRow: fresh bytes per row, the caller
// may keep them) until it returns false, and closes iter: n columns wanted.
func EachRow(iter *gocql.Iter, n int, row func([][]byte) bool) error {
	for {
		cells, ok := ScanRow(iter)
		if !ok {
			break
		}
		if len(cells) != n {
			iter.Close()
			return fmt.Errorf("%d columns, want %d", len(cells), n)
		}
		if !row(cells) {
			break
		}
	}
	return iter.Close()
}
