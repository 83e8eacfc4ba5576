package crossdriver

import (
	"encoding/binary"
	"testing"
)

// TestCrossDriverCorruptKeyAfterNullTupleElement: a list whose count says 3 and holds 2
// tuples (one with a NULL element) is no key's encoding, nor one with a 2-byte int after
// a NULL element, nor one with bytes after its last element: both drivers' DecodeKey
// refuse them (found by review: the v2 driver panics on the NULL before it reads on and
// its table took the bytes as Raw; gocql v1.7 read the short int as 0). The table checks
// the framing and every scalar inside before the driver decodes.
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
		"list count 3, two elements":   key(cat(be(3), nullThen([]byte{0, 0, 0, 1}), nullThen([]byte{0, 0, 0, 2}))),
		"2-byte int after a NULL":      key(cat(be(1), nullThen([]byte{0xde, 0xad}))),
		"bytes after the last element": key(cat(be(1), nullThen([]byte{0, 0, 0, 1}), []byte{7})),
	} {
		d1, err1 := t1.DecodeKey(b)
		d2, err2 := t2.DecodeKey(b)
		if err1 == nil || err2 == nil {
			t.Errorf("%s: v1 DecodeKey %#v err %v; v2 DecodeKey %#v err %v; want both errors", name, d1, err1, d2, err2)
		}
	}
}
