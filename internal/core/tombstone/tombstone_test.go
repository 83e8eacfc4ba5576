package tombstone

import (
	"encoding/binary"
	"testing"
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
		got, err := cellTTL(tc.b, tc.collection)
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

func TestTombstoneJoinTuple(t *testing.T) {
	got := joinTuple([][]byte{{1}, nil, {}})
	want := []byte{0, 0, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	if string(got) != string(want) {
		t.Fatalf("joinTuple = %x, want %x", got, want)
	}
}
