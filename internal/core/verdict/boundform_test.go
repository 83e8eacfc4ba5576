package verdict

import "testing"

// TestBoundFormNamedByteArray: a [16]T of a named byte type is no UUID to the rule (and
// reading it must not panic: reflect.Copy needs equal element types).
func TestBoundFormNamedByteArray(t *testing.T) {
	type octet uint8
	var v [16]octet
	if got := boundForm(v, KeyUUID); got != "" {
		t.Errorf("boundForm([16]octet) = %q, want none", got)
	}
	if got := boundForm([16]byte{1}, KeyUUID); got == "" {
		t.Errorf("boundForm([16]byte) has no form")
	}
}
