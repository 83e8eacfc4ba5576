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
