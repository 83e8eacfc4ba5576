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
	err := Outcome(x, lost, 5, false, 0, []Statement{{CQL: "INSERT INTO t (id, tags) VALUES (?, ?)", Values: args}}, nil)
	var ou *OutcomeUnknownError[int]
	if !errors.As(err, &ou) {
		t.Fatalf("err = %v, want *OutcomeUnknownError", err)
	}
	args[0], tags[0] = 2, "changed"
	if got := ou.Statements[0].Values; got[0] != 1 || got[1].([]string)[0] != "a" {
		t.Errorf("the error's values follow the caller's: %v", got)
	}
}
