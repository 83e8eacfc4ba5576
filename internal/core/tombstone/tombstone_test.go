package tombstone

import (
	"encoding/binary"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/value"
)

func TestTombstoneCellTTL(t *testing.T) {
	i32 := func(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	list := func(elems ...int) []byte {
		b := i32(len(elems))
		for _, e := range elems {
			if e < 0 {
				b = append(b, i32(-1)...) // null: no TTL
				continue
			}
			b = append(append(b, i32(4)...), i32(e)...)
		}
		return b
	}
	for _, tc := range []struct {
		b          []byte
		collection bool
		want       int
		bad        bool
	}{
		{nil, false, 0, false},           // null TTL: none
		{i32(30), false, 30, false},      // a scalar's own
		{list(5, 9), true, 9, false},     // a collection: the longest, so no element goes early
		{list(5, 0), true, 0, false},     // an element without TTL: none
		{list(5, -1), true, 0, false},    // a null element: none
		{nil, true, 0, false},            // no elements
		{[]byte{0, 1}, false, 0, true},   // not an int
		{list(5)[:9], true, 0, true},     // cut short
		{[]byte{0, 0, 0}, true, 0, true}, // not a list
	} {
		got, err := cellTTL(tc.b, tc.collection, nil)
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("cellTTL(%x, %v) = %d, %v; want %d (error %v)", tc.b, tc.collection, got, err, tc.want, tc.bad)
		}
	}
}

func TestTombstoneSplitTimes(t *testing.T) {
	wts, exps := splitTimes(map[string]int64{"a": 10, expiresKey + "a": 1_800_000_000, "b": 20})
	if len(wts) != 2 || wts["a"] != 10 || wts["b"] != 20 || len(exps) != 1 || exps["a"].Unix() != 1_800_000_000 {
		t.Fatalf("splitTimes: %v %v", wts, exps)
	}
}

func TestTombstoneCellTTLOfUDT(t *testing.T) {
	i32 := func(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	// {a: 1} of a three-field UDT written with TTL 3600: TTL() is [3600, null, null].
	ttls := append(append(append(i32(3), i32(4)...), i32(3600)...), append(i32(-1), i32(-1)...)...)
	val := append(i32(4), i32(1)...) // a = 1, b and c left out
	if got, err := cellTTL(ttls, true, value.UDTFields(val)); err != nil || got != 3600 {
		t.Fatalf("UDT with fields left out: %d, %v; want 3600", got, err)
	}
	// A field with a value and no TTL: none for the column.
	val = append(append(i32(4), i32(1)...), append(i32(4), i32(2)...)...)
	if got, err := cellTTL(ttls, true, value.UDTFields(val)); err != nil || got != 0 {
		t.Fatalf("UDT field without TTL: %d, %v; want 0", got, err)
	}
}
