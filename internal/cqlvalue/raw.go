package cqlvalue

import (
	"encoding/binary"
	"fmt"

	"github.com/gocql/gocql"
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

// Scan reads one selected column as Raw bytes. gocql v1.7.0 scans a tuple column into
// one destination per element (and counts it so in Scan's arity): Dest gives as many as
// the column's type needs, Bytes reassembles the value.
type Scan struct {
	parts []Raw
	tuple bool
}

// NewScan returns a Scan for a column of type ti.
func NewScan(ti gocql.TypeInfo) *Scan {
	if t, ok := ti.(gocql.TupleTypeInfo); ok {
		return &Scan{parts: make([]Raw, len(t.Elems)), tuple: true}
	}
	return &Scan{parts: make([]Raw, 1)}
}

// Dest appends the scan destinations to dest.
func (s *Scan) Dest(dest []any) []any {
	for i := range s.parts {
		dest = append(dest, &s.parts[i])
	}
	return dest
}

// Bytes is the value read: nil for NULL. A tuple is rebuilt from its elements (a NULL
// tuple reads as one whose elements are all NULL: tell them apart by WRITETIME).
func (s *Scan) Bytes() Raw {
	if !s.tuple {
		return s.parts[0]
	}
	var b []byte
	for _, p := range s.parts {
		if p == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff) // -1: NULL element
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	if b == nil {
		b = Raw{}
	}
	return b
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
