package retry

import (
	"context"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// TestHedgeHandOutAllocs: allocations on the hedged hot path — a first execution's host
// hand-out (the timedHost, its Timing held by value: one allocation) and HedgeStreams'
// StreamContext (none). The first move to internal/core/hedge allocated the Timing
// apart: two per hand-out (found by review).
func TestHedgeHandOutAllocs(t *testing.T) {
	h, err := newHedger(nil)
	if err != nil {
		t.Fatal(err)
	}
	host := &gocql.HostInfo{}
	ctx, _, x := h.Begin(context.Background(), engine.NopTrace{}, true, "")
	sel := gocql.SelectedHost(fakeSelected{h: host})
	handOut := testing.AllocsPerRun(1000, func() {
		x.Picked.Store(true)
		_, _ = hostOps.Timed(sel) // the wrap alone
	})
	timedAllocs := testing.AllocsPerRun(1000, func() {
		next := hedgeIterator(func() gocql.SelectedHost { return sel }, 0, x)
		_ = next()
	})
	noX := testing.AllocsPerRun(1000, func() {
		next := hedgeIterator(func() gocql.SelectedHost { return sel }, 0, nil)
		_ = next()
	})
	obs := HedgeStreams(nil)
	streamAllocs := testing.AllocsPerRun(1000, func() { _ = obs.StreamContext(ctx) })
	t.Logf("timedHost wrap alone: %.0f allocs; iterator+hand-out with x: %.0f, without x: %.0f (difference = per-hand-out cost); StreamContext: %.0f",
		handOut, timedAllocs, noX, streamAllocs)
	if d := timedAllocs - noX; d > 1 {
		t.Errorf("a hand-out costs %.0f allocations", d)
	}
	if streamAllocs != 0 {
		t.Errorf("StreamContext allocates %.0f", streamAllocs)
	}
}
