package cqlvalue

import (
	"fmt"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/value"
)

// Raw is a value in its serialised form (the native protocol's bytes for its column
// type), bound and scanned as is: a copy made through Raw is byte for byte the source,
// whatever the type — an empty blob stays empty (gocql decodes it as a nil []byte, which
// it would bind as NULL), a vector needs no codec. nil is NULL.
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

// ScanRow scans iter's next row, each column in its serialised form, and returns the
// columns' bytes (nil: NULL). gocql v1.7.0 scans a tuple column into one destination
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

// Unmarshal decodes b (ti's serialised form) into the Go value gocql scans ti into,
// with two differences: an empty blob is []byte{} (a value), not nil (NULL), and a
// vector is a slice of its elements (Raw when its element type has no codec here).
// nil b is nil.
func Unmarshal(ti gocql.TypeInfo, b []byte) (v any, err error) {
	if b == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gocql cannot unmarshal %s: %v", ti, r)
		}
	}()
	if vt, ok := ti.(VectorType); ok {
		return vt.decode(b)
	}
	if ti.Type() == gocql.TypeBlob {
		return append([]byte{}, b...), nil
	}
	p, err := New(ti)
	if err != nil {
		return nil, err
	}
	if err := gocql.Unmarshal(ti, b, p); err != nil {
		return nil, err
	}
	return Deref(p), nil
}

// Marshal is gocql.Marshal that also encodes vectors and turns a panic inside gocql
// into an error.
func Marshal(ti gocql.TypeInfo, v any) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gocql cannot marshal %T: %v", v, r)
		}
	}()
	if vt, ok := ti.(VectorType); ok {
		if v == nil {
			return nil, nil
		}
		if r, ok := v.(Raw); ok {
			return r, nil
		}
		return vt.encode(v)
	}
	return gocql.Marshal(ti, v)
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
