package engine

import (
	"strings"
	"testing"
)

// fakeQuery has the drivers' unexported timestamp fields.
type fakeQuery struct {
	defaultTimestamp      bool
	defaultTimestampValue int64
}

func TestOwnTimestamp(t *testing.T) {
	if got := StatementTimestamp(&fakeQuery{defaultTimestamp: true, defaultTimestampValue: 42}); got != 42 {
		t.Errorf("StatementTimestamp = %d, want 42", got)
	}
	for _, x := range []any{&fakeQuery{defaultTimestampValue: 42}, fakeQuery{defaultTimestamp: true, defaultTimestampValue: 1}, nil, (*fakeQuery)(nil), &struct{ a int }{}, 7} {
		if got := StatementTimestamp(x); got != 0 {
			t.Errorf("StatementTimestamp(%#v) = %d, want 0", x, got)
		}
	}
	c, err := ExecConfig{}.OwnTimestamp(42)
	if err != nil || c.TS != 42 {
		t.Errorf("the caller's timestamp: pin %d, %v; want 42", c.TS, err)
	}
	if c, err := (ExecConfig{TS: 42}).OwnTimestamp(42); err != nil || c.TS != 42 {
		t.Errorf("the same in both: %d, %v", c.TS, err)
	}
	if _, err := (ExecConfig{TS: 41}).OwnTimestamp(42); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Errorf("two timestamps: %v, want an error", err)
	}
	if c, err := (ExecConfig{TS: 41}).OwnTimestamp(0); err != nil || c.TS != 41 {
		t.Errorf("none of the caller's: %d, %v", c.TS, err)
	}
}
