package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// TestOutcomeUnknownOwnsItsValues: the outcome-unknown error keeps a copy of the values
// sent: a caller that reuses its argument slice and the slices in it afterwards does
// not change what the error says was sent (or what an outbox replays).
func TestOutcomeUnknownOwnsItsValues(t *testing.T) {
	lost := errors.New("no response")
	e := New(&Config{}, func(err error) decision.Facts {
		if errors.Is(err, lost) {
			return decision.Facts{Class: decision.ClassClientTimeout}
		}
		return decision.Facts{}
	})
	x := e.NewExec(context.Background(), verdict.Classify("INSERT INTO t (id, tags) VALUES (?, ?)"), "INSERT")
	tags := []string{"a"}
	args := []any{1, tags}
	err := Outcome(x, lost, 5, false, 0, "", []Statement{{CQL: "INSERT INTO t (id, tags) VALUES (?, ?)", Values: args}}, nil)
	var ou *OutcomeUnknownError[int]
	if !errors.As(err, &ou) {
		t.Fatalf("err = %v, want *OutcomeUnknownError", err)
	}
	args[0], tags[0] = 2, "changed"
	if got := ou.Statements[0].Values; got[0] != 1 || got[1].([]string)[0] != "a" {
		t.Errorf("the error's values follow the caller's: %v", got)
	}
}

// TestOutcomeSaysWhetherRecorded: an unknown outcome the outbox recorded says so; one
// whose append failed matches ErrNotRecorded and carries the append's error — nothing
// will replay it — while still being the outcome-unknown error with its fields.
func TestOutcomeSaysWhetherRecorded(t *testing.T) {
	lost := errors.New("no response")
	e := New(&Config{}, func(err error) decision.Facts {
		if errors.Is(err, lost) {
			return decision.Facts{Class: decision.ClassClientTimeout}
		}
		return decision.Facts{}
	})
	stmts := []Statement{{CQL: "INSERT INTO t (id) VALUES (1)"}}
	full := errors.New("no space left on device")
	for _, c := range []struct {
		name     string
		record   func(*OutcomeUnknownError[int]) error
		recorded bool
	}{
		{"recorded", func(*OutcomeUnknownError[int]) error { return nil }, true},
		{"append failed", func(*OutcomeUnknownError[int]) error { return full }, false},
	} {
		x := e.NewExec(context.Background(), verdict.Classify(stmts[0].CQL), "INSERT")
		err := Outcome(x, lost, 5, false, 0, "", stmts, c.record)
		var ou *OutcomeUnknownError[int]
		if !errors.As(err, &ou) || !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("%s: %v, want *OutcomeUnknownError", c.name, err)
		}
		if ou.Recorded != c.recorded || errors.Is(err, ErrNotRecorded) == c.recorded || (ou.RecordErr == full) == c.recorded {
			t.Errorf("%s: Recorded %v, RecordErr %v, ErrNotRecorded %v", c.name, ou.Recorded, ou.RecordErr, errors.Is(err, ErrNotRecorded))
		}
	}
}
