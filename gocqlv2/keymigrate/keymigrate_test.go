package keymigrate

import "testing"

func TestKeymigrateNewRejectsNilSession(t *testing.T) {
	if _, err := New(nil, "id", nil, nil, nil); err == nil {
		t.Error("nil session accepted")
	}
}
