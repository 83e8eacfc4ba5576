package settle

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/core/table"
)

// valuesDiffer compares two Go values as typ serializes them; known is false when it
// cannot tell (a value typ does not serialize).
func valuesDiffer[TI any](drv table.Driver[TI], typ TI, a, b any, multi bool) (differs, known bool) {
	ab, err1 := marshalCanonical(drv, typ, a, multi)
	bb, err2 := marshalCanonical(drv, typ, b, multi)
	if err1 != nil || err2 != nil {
		return false, false
	}
	if !bytes.Equal(ab, bb) || (ab == nil) != (bb == nil) {
		return true, reliable(drv.TreeOf(typ), true)
	}
	return false, true
}

// marshalCanonical serializes v as typ, with a top-level set's or map's elements in
// byte order (Go maps iterate randomly; Cassandra returns them in comparator order), and
// an empty non-frozen collection as null (Cassandra stores it as no cells).
func marshalCanonical[TI any](drv table.Driver[TI], typ TI, v any, multi bool) ([]byte, error) {
	if isNull(v) {
		return nil, nil
	}
	b, err := drv.Marshal(typ, v)
	if err != nil {
		return nil, err
	}
	return canonical(drv.TreeOf(typ), b, multi), nil
}

// canonical puts a serialized set's or map's elements in byte order; an empty
// non-frozen collection reads as null. Bytes it cannot parse are returned as they are.
func canonical(typ cqltype.Type, b []byte, multi bool) []byte {
	if b == nil {
		return nil
	}
	t := typ.Kind
	if t != cqltype.Set && t != cqltype.Map && t != cqltype.List {
		return b
	}
	if len(b) < 4 {
		return b
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n == 0 && multi {
		return nil
	}
	if t == cqltype.List || n < 0 {
		return b
	}
	per := 1
	if t == cqltype.Map {
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
	if t == cqltype.Set {
		// Cassandra keeps one of equal elements: a bound []string{"a", "a"} is {'a'}.
		elems = slices.CompactFunc(elems, bytes.Equal)
		out := binary.BigEndian.AppendUint32(nil, uint32(len(elems)))
		for _, e := range elems {
			out = append(out, e...)
		}
		return out
	}
	out := append([]byte(nil), b[:4]...)
	for _, e := range elems {
		out = append(out, e...)
	}
	return out
}

// reliable: unequal canonical bytes mean unequal values. Not so for sets and maps below
// the top level (their order is the writer's), UDTs and tuples (trailing null fields may
// be omitted), vectors, custom types and types the driver does not describe (Native
// with no name).
func reliable(typ cqltype.Type, top bool) bool {
	switch typ.Kind {
	case cqltype.Native:
		return typ.Name != ""
	case cqltype.List:
		return reliable(typ.Params[0], false)
	case cqltype.Set:
		return top && reliable(typ.Params[0], false)
	case cqltype.Map:
		return top && reliable(typ.Params[0], false) && reliable(typ.Params[1], false)
	}
	return false
}

// Cell is a column's serialized value and type as a read returned them.
type Cell[TI any] struct {
	Info TI
	Data []byte // nil: null
}
