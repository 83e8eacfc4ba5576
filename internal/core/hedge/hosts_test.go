package hedge

import (
	"context"
	"slices"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

type testHost struct{ name, dc string }

var testOps = &Ops[*testHost]{
	Up:    func(*testHost) bool { return true },
	Same:  func(a, b *testHost) bool { return a == b },
	Timed: func(h *testHost) (*testHost, *Timing) { return h, new(Timing) },
	DC:    func(h *testHost) string { return h.dc },
}

// plan is a host selection policy's iterator over hosts, in order.
func plan(hosts ...*testHost) func() *testHost {
	i := 0
	return func() *testHost {
		if i == len(hosts) {
			return nil
		}
		i++
		return hosts[i-1]
	}
}

// TestHostsStayInDCUnderLocalConsistency: a DC-aware policy's plan gives the local
// hosts, then the remote ones. Under LOCAL_QUORUM a hedge goes only to hosts of the
// first execution's data centre (the same host again when it has no other), never to
// another: that coordinator would count LOCAL_QUORUM among its own replicas. Under
// QUORUM, and for hosts of unknown data centre, the plan's order is kept.
func TestHostsStayInDCUnderLocalConsistency(t *testing.T) {
	h, err := New[*testHost](nil, testOps)
	if err != nil {
		t.Fatal(err)
	}
	a1, a2, b1, unknown := &testHost{"a1", "dc1"}, &testHost{"a2", "dc1"}, &testHost{"b1", "dc2"}, &testHost{"u", ""}
	names := func(next func() *testHost, n int) (out []string) {
		for i := 0; i < n; i++ {
			hh := next()
			if hh == nil {
				break
			}
			out = append(out, hh.name)
		}
		return out
	}
	for _, c := range []struct {
		cl    string
		plan  []*testHost
		hedge []string // the hosts the hedge's iterator gives (extra 0), at most four
	}{
		// After the plan, the hosts given so far again, the hedge's own first.
		{"LOCAL_QUORUM", []*testHost{a1, b1, a2}, []string{"a2", "a2"}},
		{"LOCAL_ONE", []*testHost{a1, b1}, []string{"a1"}},
		{"LOCAL_QUORUM", []*testHost{a1, unknown, b1}, []string{"u", "u"}},
		{"QUORUM", []*testHost{a1, b1, a2}, []string{"b1", "a2", "b1"}},
		{"", []*testHost{a1, b1}, []string{"b1", "b1"}},
	} {
		ctx, _, x := h.Begin(context.Background(), engine.NopTrace{}, true, c.cl)
		first := Pick(ctx, plan(c.plan...))
		if got := first(); got != a1 {
			t.Fatalf("%s: first host %v", c.cl, got)
		}
		if got := names(Hosts(plan(c.plan...), 0, x), 4); !slices.Equal(got, c.hedge) {
			t.Errorf("%s, plan %v: hedge hosts %v, want %v", c.cl, names(plan(c.plan...), 9), got, c.hedge)
		}
	}
}

// TestRetriesAndHedgesStayInDC: under LOCAL_QUORUM the first execution's own retry on
// the next host (WithTimeoutsOnNextHost, Overloaded, no connection) takes no host of
// another data centre from a DC-aware plan [a1, b1] — it gets a1 again — and a hedge
// after it, walking the plan and then the hosts given so far, never gets b1 either.
// Under QUORUM the retry takes b1.
func TestRetriesAndHedgesStayInDC(t *testing.T) {
	h, err := New[*testHost](nil, testOps)
	if err != nil {
		t.Fatal(err)
	}
	a1, b1 := &testHost{"a1", "dc1"}, &testHost{"b1", "dc2"}
	ctx, _, x := h.Begin(context.Background(), engine.NopTrace{}, true, "LOCAL_QUORUM")
	first := Pick(ctx, plan(a1, b1))
	if got := first(); got != a1 {
		t.Fatalf("first host %v", got)
	}
	if got := first(); got != a1 {
		t.Fatalf("LOCAL_QUORUM: the retry on the next host got %v, want a1 again (b1 is in dc2)", got)
	}
	next := Hosts(plan(a1, b1), 3, x)
	for i := 0; i < 6; i++ {
		hh := next()
		if hh == nil {
			break
		}
		if hh.dc != "dc1" {
			t.Errorf("LOCAL_QUORUM hedge given %s in %s (first host a1 in dc1)", hh.name, hh.dc)
		}
	}
	ctx, _, _ = h.Begin(context.Background(), engine.NopTrace{}, true, "QUORUM")
	first = Pick(ctx, plan(a1, b1))
	if got, again := first(), first(); got != a1 || again != b1 {
		t.Errorf("QUORUM: hosts %v then %v, want a1 then b1", got, again)
	}
}
