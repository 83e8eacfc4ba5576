package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"reflect"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
)

// EncodeKey encodes primary key values (as KeyValues returns them: partition key then
// clustering columns) into a deterministic byte string: each value marshalled for its
// column's type (the native protocol's encoding, as the driver marshals it), prefixed with its length as 4 bytes
// big-endian. DecodeKey reverses it. A wrong number of values or an absent one is
// ErrMissingKey; a value that does not fit its column is ErrBadValue.
func (t *Table[TI]) EncodeKey(key []any) ([]byte, error) {
	return t.encode(t.columns[:t.keyLen()], key)
}

// EncodePartitionKey is EncodeKey of the partition key alone: rows with equal
// encodings are in the same partition.
func (t *Table[TI]) EncodePartitionKey(key []any) ([]byte, error) {
	return t.encode(t.PartitionKey, key)
}

func (t *Table[TI]) encode(cols []Column[TI], key []any) ([]byte, error) {
	if len(key) != len(cols) {
		return nil, errorFor(ErrMissingKey, t, "", fmt.Sprintf("%d key values for %d key columns", len(key), len(cols)))
	}
	var out []byte
	for i, c := range cols {
		if t.absentKey(key[i]) {
			return nil, errorFor(ErrMissingKey, t, c.Name, "")
		}
		b, err := t.drv.Marshal(c.Type, key[i])
		if err != nil {
			return nil, errorFor(ErrBadValue, t, c.Name, err.Error())
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

// DecodeKey decodes what EncodeKey encoded: one value per primary key column, in key
// order, each of the Go type the driver scans the column's type into (int for int, string
// for text, …). Bytes that are not such an encoding — truncated, with trailing bytes,
// or a value that does not decode as its column's type — are ErrBadValue.
func (t *Table[TI]) DecodeKey(b []byte) ([]any, error) {
	cols := t.columns[:t.keyLen()]
	out := make([]any, 0, len(cols))
	for _, c := range cols {
		if len(b) < 4 {
			return nil, errorFor(ErrBadValue, t, c.Name, "corrupt key: truncated length")
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, errorFor(ErrBadValue, t, c.Name, fmt.Sprintf("corrupt key: length %d, %d bytes left", n, len(b)))
		}
		v, err := t.unmarshal(c, b[:n])
		if err != nil {
			return nil, errorFor(ErrBadValue, t, c.Name, "corrupt key: "+err.Error())
		}
		out = append(out, v)
		b = b[n:]
	}
	if len(b) > 0 {
		return nil, errorFor(ErrBadValue, t, "", fmt.Sprintf("corrupt key: %d bytes after the last column", len(b)))
	}
	return out, nil
}

// unmarshal decodes b as c's type into the Go type the driver scans it into, after
// checking its collection counts.
func (t *Table[TI]) unmarshal(c Column[TI], b []byte) (any, error) {
	if err := t.plausible(c.tree, b, false); err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return t.drv.Unmarshal(c.Type, b)
}

// fixedSize is the encoded size of the native types that have one (inet: 4, or 16 for
// IPv6; any of them may also be empty, a value CQL allows). gocql v1.7 decodes a
// wrong-sized int as 0 without an error.
var fixedSize = map[string]int{"int": 4, "bigint": 8, "smallint": 2, "tinyint": 1, "boolean": 1, "double": 8,
	"float": 4, "timestamp": 8, "uuid": 16, "timeuuid": 16, "date": 4, "time": 8, "counter": 8, "inet": 4}

// plausible checks b as tt's encoding before the driver decodes it: every collection
// count fits the bytes that follow it (gocql allocates a collection by its count before
// reading the elements: a corrupt count would otherwise allocate gigabytes), a
// collection holds exactly its count of elements, no collection, tuple or UDT has bytes
// after its last element (a tuple or UDT may end early: its last elements are NULL), and
// each scalar inside one decodes (nested: the drivers do not always look — gocql v1.7
// reads a short int after a NULL tuple element as 0, the v2 driver panics on the NULL).
func (t *Table[TI]) plausible(tt cqltype.Type, b []byte, nested bool) error {
	var elem func(i int) cqltype.Type
	n := 0
	exact := false
	switch tt.Kind {
	case cqltype.List, cqltype.Set, cqltype.Map:
		if len(b) == 0 {
			return nil
		}
		if len(b) < 4 {
			return errors.New("collection: truncated count")
		}
		count := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		per := 1
		if tt.Kind == cqltype.Map {
			per = 2
		}
		// Every element (key and value of a map entry) takes at least its 4-byte length.
		if count < 0 || int64(count)*int64(per)*4 > int64(len(b)) {
			return fmt.Errorf("collection: %d elements in %d bytes", count, len(b))
		}
		n, exact = int(count)*per, true
		elem = func(i int) cqltype.Type {
			if per == 2 && i%2 == 0 {
				return tt.Params[0]
			}
			return tt.Params[len(tt.Params)-1]
		}
	case cqltype.Tuple, cqltype.UDT:
		n = len(tt.Params)
		elem = func(i int) cqltype.Type { return tt.Params[i] }
	case cqltype.Native:
		if n, ok := fixedSize[tt.Name]; ok {
			if len(b) != n && len(b) != 0 && !(tt.Name == "inet" && len(b) == 16) {
				return fmt.Errorf("%s of %d bytes, want %d", tt.Name, len(b), n)
			}
			return nil // of the right size, both drivers decode it
		}
		switch tt.Name {
		case "", "text", "varchar", "ascii", "blob", "varint":
			return nil // any bytes decode (an unparsed type: the driver's business)
		case "decimal":
			if len(b) != 0 && len(b) < 4 {
				return fmt.Errorf("decimal of %d bytes: no room for its scale", len(b))
			}
			return nil
		}
		if nested { // duration: the driver's vints
			_, err := t.drv.Unmarshal(t.drv.TypeOf(tt), b)
			return err
		}
		return nil
	case cqltype.Vector:
		return t.plausibleVector(tt, b)
	default:
		return nil
	}
	i := 0
	for ; i < n && len(b) > 0; i++ {
		if len(b) < 4 {
			return errors.New("truncated element length")
		}
		l := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if l < 0 {
			continue // null
		}
		if int64(l) > int64(len(b)) {
			return fmt.Errorf("element of %d bytes in %d", l, len(b))
		}
		if err := t.plausible(elem(i), b[:l], true); err != nil {
			return err
		}
		b = b[l:]
	}
	if exact && i < n {
		return fmt.Errorf("collection: %d of %d elements", i, n)
	}
	if len(b) > 0 {
		return fmt.Errorf("%d bytes after the last element", len(b))
	}
	return nil
}

// absentKey reports nil, UNSET and nil pointers: no key value (the drivers would encode
// them as NULL). A nil []byte is an empty blob, as gocql scans one.
func (t *Table[TI]) absentKey(v any) bool {
	if v == nil || v == t.unset {
		return true
	}
	rv := reflect.ValueOf(v)
	return (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && rv.IsNil()
}

// plausibleVector checks a vector's encoding: its Dim elements back to back, each of a
// fixed-size type at that size, else each prefixed by its length as an unsigned vint;
// nothing after the last (the v2 driver ignores what follows; an empty value is no
// vector either, which the v2 driver reads as zeros).
func (t *Table[TI]) plausibleVector(tt cqltype.Type, b []byte) error {
	el := tt.Params[0]
	if n, ok := fixedSize[el.Name]; ok && el.Kind == cqltype.Native {
		if len(b) != tt.Dim*n {
			return fmt.Errorf("vector of %d %s in %d bytes, want %d", tt.Dim, el.Name, len(b), tt.Dim*n)
		}
		return nil
	}
	for i := 0; i < tt.Dim; i++ {
		l, n, ok := uvint(b)
		if !ok || l > uint64(len(b)-n) {
			return fmt.Errorf("vector element %d: truncated", i)
		}
		b = b[n:]
		if err := t.plausible(el, b[:l], true); err != nil {
			return fmt.Errorf("vector element %d: %w", i, err)
		}
		b = b[l:]
	}
	if len(b) > 0 {
		return fmt.Errorf("%d bytes after the vector's last element", len(b))
	}
	return nil
}

// uvint reads Cassandra's unsigned variable-length integer: the number of leading one
// bits of the first byte is the number of bytes that follow.
func uvint(b []byte) (v uint64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	extra := bits.LeadingZeros8(^b[0])
	if len(b) < 1+extra {
		return 0, 0, false
	}
	v = uint64(b[0] & (0xff >> extra))
	for i := 1; i <= extra; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v, 1 + extra, true
}
