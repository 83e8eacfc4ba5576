package settle

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/gocql/gocql"
)

// valuesDiffer compares two Go values as typ serializes them; known is false when it
// cannot tell (a value typ does not serialize).
func valuesDiffer(typ gocql.TypeInfo, a, b any, multi bool) (differs, known bool) {
	ab, err1 := marshalCanonical(typ, a, multi)
	bb, err2 := marshalCanonical(typ, b, multi)
	if err1 != nil || err2 != nil {
		return false, false
	}
	if !bytes.Equal(ab, bb) || (ab == nil) != (bb == nil) {
		return true, reliable(typ, true)
	}
	return false, true
}

// marshalCanonical serializes v as typ, with a top-level set's or map's elements in
// byte order (Go maps iterate randomly; Cassandra returns them in comparator order), and
// an empty non-frozen collection as null (Cassandra stores it as no cells).
func marshalCanonical(typ gocql.TypeInfo, v any, multi bool) ([]byte, error) {
	if isNull(v) {
		return nil, nil
	}
	b, err := gocql.Marshal(typ, v)
	if err != nil {
		return nil, err
	}
	return canonical(typ, b, multi), nil
}

// canonical puts a serialized set's or map's elements in byte order; an empty
// non-frozen collection reads as null. Bytes it cannot parse are returned as they are.
func canonical(typ gocql.TypeInfo, b []byte, multi bool) []byte {
	if b == nil {
		return nil
	}
	t := typ.Type()
	if t != gocql.TypeSet && t != gocql.TypeMap && t != gocql.TypeList {
		return b
	}
	if len(b) < 4 {
		return b
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n == 0 && multi {
		return nil
	}
	if t == gocql.TypeList || n < 0 {
		return b
	}
	per := 1
	if t == gocql.TypeMap {
		per = 2
	}
	rest := b[4:]
	elems := make([][]byte, 0, n)
	for range n {
		start := rest
		size := 0
		for range per {
			if len(rest) < 4 {
				return b
			}
			l := int(int32(binary.BigEndian.Uint32(rest)))
			rest = rest[4:]
			if l > 0 {
				if len(rest) < l {
					return b
				}
				rest = rest[l:]
			}
			size += 4 + max(l, 0)
		}
		elems = append(elems, start[:size])
	}
	if len(rest) != 0 {
		return b
	}
	slices.SortFunc(elems, bytes.Compare)
	out := append([]byte(nil), b[:4]...)
	for _, e := range elems {
		out = append(out, e...)
	}
	return out
}

// reliable: unequal canonical bytes mean unequal values. Not so for sets and maps below
// the top level (their order is the writer's), UDTs and tuples (trailing null fields may
// be omitted) and custom types.
func reliable(typ gocql.TypeInfo, top bool) bool {
	switch x := typ.(type) {
	case gocql.NativeType:
		return x.Type() != gocql.TypeCustom
	case gocql.CollectionType:
		switch x.Type() {
		case gocql.TypeList:
			return reliable(x.Elem, false)
		case gocql.TypeSet:
			return top && reliable(x.Elem, false)
		case gocql.TypeMap:
			return top && reliable(x.Key, false) && reliable(x.Elem, false)
		}
	}
	return false
}

// rawCell keeps a column's serialized value and type as the read returned them.
type rawCell struct {
	info gocql.TypeInfo
	data []byte
}

func (c *rawCell) UnmarshalCQL(info gocql.TypeInfo, data []byte) error {
	c.info = info
	if data != nil {
		c.data = append(make([]byte, 0, len(data)), data...)
	}
	return nil
}
