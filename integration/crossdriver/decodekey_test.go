package crossdriver

import (
	"encoding/binary"
	"testing"
)

// TestCrossDriverCorruptKeyAfterNullTupleElement: a list whose count says 3 and holds 2
// tuples (one with a NULL element) is no key's encoding: both drivers' DecodeKey refuse
// it (found by review: the v2 driver panics on the NULL before it finds the missing
// element, and its table took the bytes as Raw). gocql v1.7 decodes a 2-byte int after a
// NULL element as 0, as it always has; v2 refuses it (gocqlv2/table/decodekey_test.go).
func TestCrossDriverCorruptKeyAfterNullTupleElement(t *testing.T) {
	be := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	elem := func(b []byte) []byte { return cat(be(int32(len(b))), b) }
	key := func(list []byte) []byte { return cat(elem([]byte{0, 0, 0, 1}), elem(list)) }
	nullThen := func(b []byte) []byte { return elem(cat(be(-1), elem(b))) }
	t1, t2 := both(t, []string{"id int"}, []string{"k frozen<list<frozen<tuple<int, int>>>>"}, nil)
	for name, b := range map[string][]byte{
		"list count 3, two elements": key(cat(be(3), nullThen([]byte{0, 0, 0, 1}), nullThen([]byte{0, 0, 0, 2}))),
	} {
		d1, err1 := t1.DecodeKey(b)
		d2, err2 := t2.DecodeKey(b)
		if err1 == nil || err2 == nil {
			t.Errorf("%s: v1 DecodeKey %#v err %v; v2 DecodeKey %#v err %v; want both errors", name, d1, err1, d2, err2)
		}
	}
}
