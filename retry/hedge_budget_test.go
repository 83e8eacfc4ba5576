package retry

// The budget of lost hedges (HedgeBudget), on gocql's own executor against the loopback
// fake server of hedge_estimator_test.go.

import (
	"github.com/cqlsafe/cqlsafe/internal/core/engine"

	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// wonTracer counts what HedgeTrace heard: executions with hedges sent, hedges sent,
// executions a hedge won.
type wonTracer struct{ execs, sent, won atomic.Int64 }

type wonTrace struct {
	t  *wonTracer
	hs Hedges
}

func (t *wonTracer) Begin(ctx context.Context, _ Execution) (context.Context, Trace) {
	return ctx, &wonTrace{t: t}
}
func (tr *wonTrace) Attempt(Event)   {}
func (tr *wonTrace) Hedged(h Hedges) { tr.hs = h }
func (tr *wonTrace) End(error, int) {
	if tr.hs.Sent > 0 {
		tr.t.execs.Add(1)
		tr.t.sent.Add(int64(tr.hs.Sent))
		if tr.hs.Won {
			tr.t.won.Add(1)
		}
	}
}

// budgetRun prepares the statement on a fresh session to srv, then runs n executions
// of it through p on workers goroutines; it returns the EXECUTEs the server saw for
// them and the longest execution.
func budgetRun(t *testing.T, srv *rvServer, on *atomic.Bool, p *Policy, n, workers int) (requests int64, longest time.Duration) {
	t.Helper()
	sess := rvSession(t, srv)
	if err := sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, 0, "v").Exec(); err != nil { // prepare
		t.Fatal(err)
	}
	before := srv.n.Load()
	on.Store(true)
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				t0 := time.Now()
				if err := p.Exec(context.Background(), sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, i, "v")); err != nil {
					t.Errorf("execution %d: %v", i, err)
				}
				mu.Lock()
				longest = max(longest, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	on.Store(false)
	return srv.n.Load() - before, longest
}

// TestHedgeBudgetStopsLosingHedges: every request answers in 20 ms, the hedge delay is
// 5 ms, so every hedge is sent and every one loses (the first answers first): hedging
// only adds load. 1000 executions, 8 at a time, two hedges each allowed: with the
// default budget (0.05 lost hedges per execution, 50 to start with, and 50 more of
// last resorts once it is empty — here the ceiling is the delay) at most
// 50 + 50 + 0.05×1000 = 150 hedges are sent — not 2000.
func TestHedgeBudgetStopsLosingHedges(t *testing.T) {
	var on atomic.Bool
	srv := startRV(t, func(int64) (time.Duration, bool) {
		if on.Load() {
			return 20 * time.Millisecond, false
		}
		return 0, false
	})
	tracer := &wonTracer{}
	p := NewPolicy(WithHedging(HedgeDelayBounds(5*time.Millisecond, 5*time.Millisecond)), WithTracer(tracer),
		WithSchema(mapSchema{}))
	const n = 1000
	requests, _ := budgetRun(t, srv, &on, p, n, 8)
	hedges := requests - n
	t.Logf("%d executions: %d requests, %d hedges; heard %d sent, %d won", n, requests, hedges, tracer.sent.Load(), tracer.won.Load())
	// On a loaded machine (CI runs packages beside each other on 2 cores) a first request
	// can be scheduled late enough that its hedge, sent 5 ms later, answers first: such a
	// hedge won, gave its token back and allowed one more; the bound counts them.
	won := tracer.won.Load()
	if hedges > 150+won {
		t.Errorf("%d hedges sent, %d won: want at most 150 + won (budget 50 + 50 in debt + 0.05 × %d)", hedges, won, n)
	}
	if hedges < 50 {
		t.Errorf("%d hedges sent: the budget starts with 50", hedges)
	}
	if won > hedges/10 {
		t.Errorf("%d executions heard as won by a hedge; every first request should answer first", won)
	}
}

// TestHedgeBudgetSparesWinningHedges: every fifth request's response is lost, the others
// answer in 1 ms; executions one at a time, so a lost first request's hedge is the next
// request and answers. Each such hedge wins and costs the budget nothing: all 120 lost
// responses of 600 executions are hedged (a budget charged for every hedge would be
// spent after 50 + 0.05 × 600 = 80, and the rest would wait for the 2 s client timeout).
func TestHedgeBudgetSparesWinningHedges(t *testing.T) {
	var on atomic.Bool
	srv := startRV(t, func(n int64) (time.Duration, bool) {
		return time.Millisecond, on.Load() && n%5 == 0
	})
	tracer := &wonTracer{}
	p := NewPolicy(WithHedging(HedgeDelayBounds(5*time.Millisecond, 5*time.Millisecond)), WithTracer(tracer),
		WithSchema(mapSchema{}))
	const n = 600
	requests, longest := budgetRun(t, srv, &on, p, n, 1)
	t.Logf("%d executions: %d requests; heard %d hedged, %d won; longest execution %v; budget left %.2f hedges",
		n, requests, tracer.execs.Load(), tracer.won.Load(), longest, float64(p.cfg.hedge.Tokens.Load())/hedgeToken)
	if longest > 500*time.Millisecond {
		t.Errorf("an execution took %v: a lost response was not hedged (budget spent by winning hedges?)", longest)
	}
	if w := tracer.won.Load(); w < 100 {
		t.Errorf("%d executions heard as won by a hedge, want the ~%d whose first response was lost", w, requests/5)
	}
}

// TestHedgeBudgetOption: HedgeBudget takes (0, 1] and sets the refill.
func TestHedgeBudgetOption(t *testing.T) {
	for _, bad := range []float64{0, -0.1, 1.5, nan()} {
		if _, err := newHedger([]HedgeOption{HedgeBudget(bad)}); err == nil {
			t.Errorf("HedgeBudget(%v) accepted", bad)
		}
	}
	h, err := newHedger([]HedgeOption{HedgeBudget(0.2)})
	if err != nil {
		t.Fatal(err)
	}
	if h.Refill != hedgeToken/5 || h.Tokens.Load() != hedgeBurst {
		t.Errorf("refill %d, tokens %d; want %d, %d", h.Refill, h.Tokens.Load(), hedgeToken/5, hedgeBurst)
	}
}

// TestHedgeDelayDoubledOnLowBudget: below half a budget the delay an execution waits
// is doubled, within the ceiling; with the budget empty it is the ceiling, and its
// hedges are last resorts, which may take the budget down to minus a full one.
func TestHedgeDelayDoubledOnLowBudget(t *testing.T) {
	h, err := newHedger([]HedgeOption{HedgeDelayBounds(time.Millisecond, 30*time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	h.DelayNs.Store(int64(10 * time.Millisecond))
	for _, tc := range []struct {
		tokens, delayMs int64
		want            time.Duration
		last            bool
	}{
		{hedgeBurst, 10, 10 * time.Millisecond, false},
		{hedgeBurst/2 - 1, 10, 20 * time.Millisecond, false},
		{hedgeBurst/2 - 1, 20, 30 * time.Millisecond, false}, // doubled past the ceiling
		{hedgeToken - 1, 10, 30 * time.Millisecond, true},    // empty: the ceiling, last resort
	} {
		h.Tokens.Store(tc.tokens)
		h.DelayNs.Store(tc.delayMs * int64(time.Millisecond))
		if d, last := h.RunDelay(); d != tc.want || last != tc.last {
			t.Errorf("budget %d, delay %d ms: %v (last resort %v), want %v (%v)", tc.tokens, tc.delayMs, d, last, tc.want, tc.last)
		}
	}
	h.Tokens.Store(0)
	if h.Take(false) {
		t.Error("an empty budget gave an ordinary hedge")
	}
	n := 0
	for h.Take(true) {
		n++
	}
	if n != hedgeBurst/hedgeToken || h.Tokens.Load() != -hedgeBurst {
		t.Errorf("%d last resorts from an empty budget, ending at %d: want %d, ending at %d", n, h.Tokens.Load(), hedgeBurst/hedgeToken, -hedgeBurst)
	}
}

// TestHedgeStreamsChargesOvertakes: every first request answers in 30 ms, every hedge
// (sent after 5 ms) in 1 ms: each hedge wins, but only by overtaking — the first's
// response comes after all. Without HedgeStreams the Policy cannot tell, and all 300
// executions are hedged. With it each such hedge costs the budget like a lost one:
// at most 50 + 50 (last resorts, in debt; here the ceiling is the delay) + 0.05 × 300 =
// 115 hedges (a few more for responses still on their way when the next execution
// starts).
func TestHedgeStreamsChargesOvertakes(t *testing.T) {
	for _, streams := range []bool{false, true} {
		name := "without HedgeStreams"
		if streams {
			name = "with HedgeStreams"
		}
		t.Run(name, func(t *testing.T) {
			var on, first atomic.Bool
			srv := startRV(t, func(int64) (time.Duration, bool) {
				if on.Load() && first.CompareAndSwap(true, false) {
					return 30 * time.Millisecond, false
				}
				return time.Millisecond, false
			})
			sess := fakeSession(t, srv, 2*time.Second, func(cl *gocql.ClusterConfig) {
				cl.PoolConfig.HostSelectionPolicy = HedgingHosts(gocql.RoundRobinHostPolicy())
				if streams {
					cl.StreamObserver = HedgeStreams(nil)
				}
			})
			tracer := &wonTracer{}
			p := NewPolicy(WithHedging(HedgeDelayBounds(5*time.Millisecond, 5*time.Millisecond), HedgeMaxInFlight(2)),
				WithTracer(tracer), WithSchema(mapSchema{}))
			if err := sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, 0, "v").Exec(); err != nil { // prepare
				t.Fatal(err)
			}
			on.Store(true)
			const n = 300
			for i := 1; i <= n; i++ {
				first.Store(true)
				if err := p.Exec(context.Background(), sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, i, "v")); err != nil {
					t.Fatalf("execution %d: %v", i, err)
				}
			}
			sent, won := tracer.sent.Load(), tracer.won.Load()
			t.Logf("%d executions: %d hedges sent, %d won; budget left %.2f", n, sent, won, float64(p.cfg.hedge.Tokens.Load())/hedgeToken)
			if !streams && sent < n-5 {
				t.Errorf("without HedgeStreams: %d hedges, want about one per execution (%d): each wins", sent, n)
			}
			if streams && sent > 125 {
				t.Errorf("with HedgeStreams: %d hedges, want at most ~115: each only overtook a first that answered", sent)
			}
		})
	}
}

// TestHedgeUnsentRefunded: a hedge the timer decided on but that was cancelled before
// gocql asked for its host never left the client: it is not heard as sent and its
// token goes back to the budget.
func TestHedgeUnsentRefunded(t *testing.T) {
	h, err := newHedger(nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &hedgeTrace{}
	_, tr, _ := h.Begin(context.Background(), rec, true, "")
	x := tr.(*hedgeExec)
	x.Picked.Store(true)
	if !h.Take(false) {
		t.Fatal("a full budget gave no hedge")
	}
	x.Sent = 1 // decided on, never given a host (x.Handed 0)
	tr.End(nil, 1)
	if len(rec.calls) != 1 || rec.calls[0] != "end" {
		t.Errorf("calls %v, want [end]: no hedge left the client", rec.calls)
	}
	if got := h.Tokens.Load(); got != hedgeBurst {
		t.Errorf("budget %d after an unsent hedge, want it full (%d)", got, hedgeBurst)
	}
}

// TestHedgeLastResortWithEmptyBudget: the budget spent (every hedge lost for a while),
// a first request whose response is lost is still hedged — at the delay ceiling, as a
// last resort — and the write takes about the ceiling, not the 2 s client timeout.
func TestHedgeLastResortWithEmptyBudget(t *testing.T) {
	var on, drop, first atomic.Bool
	srv := startRV(t, func(int64) (time.Duration, bool) {
		if !on.Load() {
			return 0, false
		}
		if first.CompareAndSwap(true, false) {
			return 20 * time.Millisecond, drop.Load()
		}
		return time.Millisecond, false
	})
	sess := rvSession(t, srv)
	tracer := &wonTracer{}
	p := NewPolicy(WithHedging(HedgeDelayBounds(5*time.Millisecond, 50*time.Millisecond), HedgeMaxInFlight(2)),
		WithTracer(tracer), WithSchema(mapSchema{}))
	if err := sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, 0, "v").Exec(); err != nil { // prepare
		t.Fatal(err)
	}
	on.Store(true)
	p.cfg.hedge.DelayNs.Store(int64(5 * time.Millisecond))
	p.cfg.hedge.Tokens.Store(0) // spent
	drop.Store(true)
	for i := 1; i <= 5; i++ {
		first.Store(true)
		t0 := time.Now()
		if err := p.Exec(context.Background(), sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, i, "v")); err != nil {
			t.Fatalf("execution %d: %v", i, err)
		}
		if d := time.Since(t0); d < 45*time.Millisecond || d > 500*time.Millisecond {
			t.Errorf("execution %d, first response lost, budget empty: took %v, want about the 50 ms ceiling", i, d)
		}
	}
	if w := tracer.won.Load(); w != 5 {
		t.Errorf("%d executions won by a last-resort hedge, want 5", w)
	}
	if got := p.cfg.hedge.Tokens.Load(); got < 0 {
		t.Errorf("budget %d after last resorts that all won: want them given back", got)
	}
}

// TestHedgeLastResortWhenBudgetRunsDry: an execution starts while the budget holds one
// hedge (an ordinary delay, 5 ms), but another takes it before its hedge is due: its
// first response lost, it still gets a hedge, at the 50 ms ceiling as a last resort,
// not after the 2 s client timeout.
func TestHedgeLastResortWhenBudgetRunsDry(t *testing.T) {
	var on, first atomic.Bool
	srv := startRV(t, func(int64) (time.Duration, bool) {
		if on.Load() && first.CompareAndSwap(true, false) {
			return 0, true // the first request's response is lost
		}
		return time.Millisecond, false
	})
	sess := rvSession(t, srv)
	tracer := &wonTracer{}
	p := NewPolicy(WithHedging(HedgeDelayBounds(5*time.Millisecond, 50*time.Millisecond), HedgeMaxInFlight(2)),
		WithTracer(tracer), WithSchema(mapSchema{}))
	if err := sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, 0, "v").Exec(); err != nil { // prepare
		t.Fatal(err)
	}
	h := p.cfg.hedge
	h.DelayNs.Store(int64(5 * time.Millisecond))
	on.Store(true)
	for i := 1; i <= 3; i++ {
		h.Tokens.Store(hedgeToken) // one hedge left: not a last resort
		first.Store(true)
		done := make(chan time.Duration, 1)
		go func() {
			t0 := time.Now()
			if err := p.Exec(context.Background(), sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, i, "v")); err != nil {
				t.Errorf("execution %d: %v", i, err)
			}
			done <- time.Since(t0)
		}()
		time.Sleep(time.Millisecond)
		if !h.Take(false) { // another execution's hedge takes the last one
			t.Fatal("the budget held no hedge")
		}
		if d := <-done; d < 45*time.Millisecond || d > 500*time.Millisecond {
			t.Errorf("execution %d, first response lost, budget gone before its hedge was due: took %v, want about the 50 ms ceiling", i, d)
		}
	}
	if w := tracer.won.Load(); w != 3 {
		t.Errorf("%d executions won by a hedge, want 3", w)
	}
}

// TestHedgeStreamsChargesOnlyLateResponses: HedgeStreams charges a first execution's
// stream that finishes after a hedge won and the first returned — not one released
// while the first still runs (a request cancelled before it was written) — and passes
// every event on to the observer it wraps.
func TestHedgeStreamsChargesOnlyLateResponses(t *testing.T) {
	h, err := newHedger(nil)
	if err != nil {
		t.Fatal(err)
	}
	next := &countingStreams{}
	o := HedgeStreams(next)
	for _, tc := range []struct {
		won, done bool
		charged   bool
	}{{false, false, false}, {true, false, false}, {false, true, false}, {true, true, true}} {
		h.Tokens.Store(hedgeBurst)
		ctx, _, x := h.Begin(context.Background(), engine.NopTrace{}, true, "")
		x.Won, x.Done = tc.won, tc.done
		sc := o.StreamContext(ctx)
		sc.StreamStarted(gocql.ObservedStream{})
		sc.StreamFinished(gocql.ObservedStream{})
		sc.StreamFinished(gocql.ObservedStream{}) // a retry's stream: charged once at most
		if charged := h.Tokens.Load() < hedgeBurst; charged != tc.charged {
			t.Errorf("won %v, first returned %v: charged %v, want %v", tc.won, tc.done, charged, tc.charged)
		}
		if h.Tokens.Load() < hedgeBurst-hedgeToken {
			t.Errorf("charged more than once: budget %d", h.Tokens.Load())
		}
	}
	if next.started.Load() != 4 || next.finished.Load() != 8 {
		t.Errorf("wrapped observer heard %d starts, %d finishes; want 4, 8", next.started.Load(), next.finished.Load())
	}
	if sc := o.StreamContext(context.Background()); sc == nil || next.contexts.Load() != 5 {
		t.Errorf("a stream of no hedged execution: context %v, wrapped observer asked %d times; want its own, 5", sc, next.contexts.Load())
	}
	if sc := HedgeStreams(nil).StreamContext(context.Background()); sc != nil {
		t.Errorf("no wrapped observer, no hedged execution: %v, want nil", sc)
	}
}

type countingStreams struct{ contexts, started, finished atomic.Int64 }

func (c *countingStreams) StreamContext(context.Context) gocql.StreamObserverContext {
	c.contexts.Add(1)
	return c
}
func (c *countingStreams) StreamStarted(gocql.ObservedStream)   { c.started.Add(1) }
func (c *countingStreams) StreamAbandoned(gocql.ObservedStream) {}
func (c *countingStreams) StreamFinished(gocql.ObservedStream)  { c.finished.Add(1) }
