package retry

import (
	"context"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
	"github.com/cqlsafe/cqlsafe/internal/core/hedge"
)

// TestHedgingHostsNilInner: the v2 driver (session.go:225, v2.1.2) defaults a nil
// PoolConfig.HostSelectionPolicy to RoundRobinHostPolicy. The wrap written like
// HedgeStreams' (cl.PoolConfig.HostSelectionPolicy =
// HedgingHosts(cl.PoolConfig.HostSelectionPolicy)) on a fresh NewCluster must still
// install the wrapper (over round robin): returning nil, as it did, left the session
// without it and WithHedging silently sent every statement once (found by review).
func TestHedgingHostsNilInner(t *testing.T) {
	cl := gocql.NewCluster("127.0.0.1")
	if cl.PoolConfig.HostSelectionPolicy != nil {
		t.Skip("NewCluster sets a policy")
	}
	cl.PoolConfig.HostSelectionPolicy = HedgingHosts(cl.PoolConfig.HostSelectionPolicy)
	cl.StreamObserver = HedgeStreams(cl.StreamObserver) // works from nil
	if _, ok := cl.PoolConfig.HostSelectionPolicy.(hedgingHosts); !ok {
		if _, ok := cl.PoolConfig.HostSelectionPolicy.(readyHedgingHosts); !ok {
			t.Errorf("HedgingHosts(nil) = %v: the driver will default to round robin without the wrapper, and nothing is hedged", cl.PoolConfig.HostSelectionPolicy)
		}
	}
}

type ctxStmt struct {
	gocql.ExecutableStatement
	ctx context.Context
}

func (s ctxStmt) Context() context.Context     { return s.ctx }
func (ctxStmt) GetRoutingKey() ([]byte, error) { return nil, nil }
func (ctxStmt) Keyspace() string               { return "" }
func (ctxStmt) IsIdempotent() bool             { return true }
func (ctxStmt) GetHostID() string              { return "" }

// TestHedgingHostsPickReadsStatementContext: the adapter's Pick finds the execution in the
// statement's Context(): a first execution is marked picked.
func TestHedgingHostsPickReadsStatementContext(t *testing.T) {
	h, err := newHedger(nil)
	if err != nil {
		t.Fatal(err)
	}
	first, _, x := h.Begin(context.Background(), engine.NopTrace{}, true, "")
	pol := HedgingHosts(gocql.RoundRobinHostPolicy())
	host := &gocql.HostInfo{}
	pol.AddHost(host) // host state: unknown/down; Pick still hands it out
	next := pol.Pick(ctxStmt{ctx: first})
	_ = next()
	if !x.Picked.Load() {
		t.Fatal("first execution not marked picked")
	}
	// A statement without Context() (not the driver's): the inner iterator, untouched.
	_, _, y := h.Begin(context.Background(), engine.NopTrace{}, true, "")
	_ = pol.Pick(struct{ gocql.ExecutableStatement }{ctxStmt{ctx: first}})
	if y.Picked.Load() {
		t.Fatal("picked without a context")
	}
}

// TestHedgeStreamsChargesLateResponse: HedgeStreams on v2 follows a first execution's
// stream and charges a late response once.
func TestHedgeStreamsChargesLateResponse(t *testing.T) {
	h, err := newHedger(nil)
	if err != nil {
		t.Fatal(err)
	}
	first, _, x := h.Begin(context.Background(), engine.NopTrace{}, true, "")
	o := HedgeStreams(nil)
	sc := o.StreamContext(first)
	if sc == nil {
		t.Fatal("HedgeStreams does not follow a first execution's stream")
	}
	if o.StreamContext(context.Background()) != nil {
		t.Fatal("HedgeStreams follows an unrelated stream")
	}
	before := h.Tokens.Load()
	x.Won, x.Done = true, true
	sc.StreamFinished(gocql.ObservedStream{})
	sc.StreamFinished(gocql.ObservedStream{})
	if got := before - h.Tokens.Load(); got != 1_000_000 {
		t.Errorf("late response charged %d millionths, want one hedge", got)
	}
}

// TestHedgeHandOutAllocs: a host handed out to a hedged execution costs one
// allocation (the timedHost, its Timing held by value), as on gocql v1.7: the iterator
// with an execution against the same without one.
func TestHedgeHandOutAllocs(t *testing.T) {
	h, err := newHedger(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, x := h.Begin(context.Background(), engine.NopTrace{}, true, "")
	var sel gocql.SelectedHost = fakeSelected{&gocql.HostInfo{}}
	next := func() gocql.SelectedHost { return sel }
	with := testing.AllocsPerRun(1000, func() { _ = hedge.Iterator(next, 0, x, hostOps)() })
	without := testing.AllocsPerRun(1000, func() { _ = hedge.Iterator(next, 0, nil, hostOps)() })
	if d := with - without; d > 1 {
		t.Errorf("a hand-out costs %.0f allocations, want 1", d)
	}
}

type fakeSelected struct{ h *gocql.HostInfo }

func (s fakeSelected) Info() *gocql.HostInfo { return s.h }
func (fakeSelected) Mark(error)              {}
