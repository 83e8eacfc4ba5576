package engine

import (
	"reflect"
	"testing"
)

// TestSnapshotNilValues: a step of Do bound with nil (NULL, as a user binds it) is
// remembered as nil, not a panic — nil at the top, in a slice, a map and behind a
// pointer. The oracle's operations run hit this once NULL collections were bound as nil.
func TestSnapshotNilValues(t *testing.T) {
	var nilSlice []int
	var nilPtr *int
	values := []any{nil, []any{nil, 1}, map[string]any{"a": nil}, nilSlice, nilPtr, [2]any{nil, "x"}}
	got := Snapshot(values)
	if !reflect.DeepEqual(got, values) {
		t.Errorf("snapshot(%#v) = %#v", values, got)
	}
	if !sameValues(got, values) {
		t.Error("a snapshot with nils is not the same values")
	}
}

// TestSnapshotStructSlices: a struct bound by value whose exported fields hold a slice
// and a map is copied deeply: the caller appending to or overwriting them afterwards
// does not change the snapshot.
func TestSnapshotStructSlices(t *testing.T) {
	type addr struct {
		Lines []string
		Tags  map[string]int
		N     int
	}
	a := addr{Lines: []string{"x"}, Tags: map[string]int{"a": 1}, N: 1}
	got := Snapshot([]any{a, &a})
	a.Lines[0], a.Tags["a"], a.N = "changed", 2, 2
	for i, g := range []addr{got[0].(addr), *got[1].(*addr)} {
		if g.Lines[0] != "x" || g.Tags["a"] != 1 || g.N != 1 {
			t.Errorf("value %d: snapshot changed with the caller's struct: %+v", i, g)
		}
	}
}

// TestSnapshotCycle: a value that points back at itself (a struct with a back-pointer)
// is copied with the same shape, not followed forever (a stack overflow killed the
// process from Do and from an outcome-unknown error).
func TestSnapshotCycle(t *testing.T) {
	type owner struct {
		Name string
		Home any
	}
	type addr struct {
		Street string
		Owner  *owner
	}
	o := &owner{Name: "ada"}
	a := &addr{Street: "x", Owner: o}
	o.Home = a
	got := Snapshot([]any{a, *a})[0].(*addr)
	if got == a || got.Owner == o || got.Owner.Home.(*addr) != got {
		t.Errorf("the copy does not keep the cycle's shape: %+v", got)
	}
}
