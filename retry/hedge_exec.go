package retry

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// hedgeKey carries an execution's *hedgeExec in the context of its first execution,
// hedgeOfKey in a hedge's, for HedgingHosts.
type (
	hedgeKey   struct{}
	hedgeOfKey struct{}
)

// hedgeExec is one execution under a hedging Policy: the first execution runs on the
// caller's goroutine (gocql's plain path: no goroutine, no ticker), and a timer sends
// each hedge, on a goroutine of its own, when it is due and the first has not
// answered (run). It also wraps the execution's Trace to record its latency and tell
// of its hedges.
type hedgeExec struct {
	h      *hedger
	inner  Trace
	start  time.Time
	hedged bool        // repeatable and pinned: may be hedged
	picked atomic.Bool // the first execution's host selection went through HedgingHosts
	// base is the context hedges run with (the caller's, with hedgeOfKey); cancelFirst
	// ends the first execution's, once a hedge has answered or the execution is over.
	base        context.Context
	cancelFirst context.CancelFunc
	// answerNs is 1 + the latency of the first request that answered (HedgingHosts
	// times each request); 0 until one did.
	answerNs atomic.Int64
	// overtaken: a hedge won, and the first execution's response came after all
	// (HedgeStreams): charged to the budget once.
	overtaken atomic.Bool
	// handed counts the hedges that were given a host (gocql asks just before it
	// sends): a hedge fire decided on but cancelled before that never left.
	handed atomic.Int32

	mu         sync.Mutex
	given      []gocql.SelectedHost // hosts given to the execution's requests, in order
	again      func(context.Context) error
	timer      *time.Timer
	delay      time.Duration
	lastResort bool      // the budget was empty: hedges at the ceiling (runDelay)
	armed      time.Time // when the timer was first set
	done       bool      // the first execution returned: no further hedge
	sent       int       // hedges sent
	won        bool      // a hedge answered, with success, before the first execution did
	results    chan error
	cancels    []context.CancelFunc // of the hedges
}

var _ Trace = (*hedgeExec)(nil)

// begin starts one execution's latency record and, when it may be hedged (repeatable
// and pinned), returns the hedgeExec to run it with and the context its first
// execution must run with (cancelled when a hedge answers first). A nil hedger (no
// WithHedging) changes nothing.
func (h *hedger) begin(ctx context.Context, tr Trace, repeatable bool) (context.Context, Trace, *hedgeExec) {
	if h == nil {
		return ctx, tr, nil
	}
	x := &hedgeExec{h: h, inner: tr, start: time.Now(), hedged: repeatable}
	if !repeatable {
		return ctx, x, nil
	}
	x.base = context.WithValue(ctx, hedgeOfKey{}, x)
	first, cancel := context.WithCancel(context.WithValue(ctx, hedgeKey{}, x))
	x.cancelFirst = cancel
	return first, x, x
}

// run executes first — the first execution, on the caller's goroutine — and, while it
// has not returned, sends again (the same statement with the context it is given, on
// the next host: HedgingHosts) as a hedge every delay, up to HedgeMaxInFlight − 1
// hedges, each only if the first execution was picked through HedgingHosts and the
// budget holds a hedge. The first answer wins: a hedge's success cancels the first
// execution and is the result; the first's success cancels the hedges. When the first
// fails, the hedges in flight are waited for: any success is the result, else the
// first's error, with the hedges' errors (none: none sent). A nil or unhedged x just
// runs first. Whatever is still in flight when the result is known is cancelled and
// waited for.
func (x *hedgeExec) run(first func() error, again func(context.Context) error) (hedgeErrs []error, err error) {
	if x == nil || !x.hedged {
		return nil, first()
	}
	defer x.cancelFirst()
	x.mu.Lock()
	x.again = again
	x.delay, x.lastResort = x.h.runDelay()
	x.armed = time.Now()
	x.timer = time.AfterFunc(x.delay, x.fire)
	x.mu.Unlock()

	err = first()

	x.mu.Lock()
	x.done = true
	x.timer.Stop()
	won, n := x.won, x.sent
	x.mu.Unlock()
	got := 0
	if err != nil && !won {
		for got < n { // the first failed: a hedge in flight may still succeed
			e := <-x.results
			got++
			if e == nil {
				x.mu.Lock()
				x.won = true
				x.mu.Unlock()
				won = true
				break
			}
			hedgeErrs = append(hedgeErrs, e)
		}
	}
	// End what is still in flight, and wait for it: nothing of the execution runs
	// once run has returned (no Attempt after End, no context left registered).
	x.cancelFirst()
	x.cancelHedges()
	for ; got < n; got++ {
		<-x.results
	}
	if err == nil || won {
		return nil, nil
	}
	return hedgeErrs, err
}

// cancelHedges ends the hedges still in flight and releases their contexts.
func (x *hedgeExec) cancelHedges() {
	x.mu.Lock()
	cancels := x.cancels
	x.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// fire sends one hedge when it is due (the timer's goroutine runs it, and the hedge).
func (x *hedgeExec) fire() {
	x.mu.Lock()
	if x.done || x.sent >= x.h.cfg.inFlight-1 || !x.picked.Load() {
		x.mu.Unlock()
		return
	}
	ok := x.h.take(x.lastResort)
	if !ok && !x.lastResort {
		// The budget ran dry since the execution started: its hedge becomes a last
		// resort, at the ceiling (runDelay).
		x.lastResort = true
		if wait := x.h.cfg.ceiling - time.Since(x.armed); wait > 0 {
			x.timer.Reset(wait)
			x.mu.Unlock()
			return
		}
		ok = x.h.take(true)
	}
	if !ok {
		x.mu.Unlock()
		return
	}
	x.sent++
	if x.results == nil {
		x.results = make(chan error, x.h.cfg.inFlight-1)
	}
	ctx, cancel := context.WithCancel(x.base)
	x.cancels = append(x.cancels, cancel)
	if x.sent < x.h.cfg.inFlight-1 {
		x.timer.Reset(x.delay)
	}
	again := x.again
	x.mu.Unlock()

	err := again(ctx)
	if err == nil {
		x.mu.Lock()
		if !x.done {
			x.won = true
			x.cancelFirst()
		}
		x.mu.Unlock()
	}
	x.results <- err
}

func (x *hedgeExec) Attempt(ev Event) { x.inner.Attempt(ev) }

// End records the latency of the request that answered (when HedgingHosts timed one:
// see hedger), settles the budget, tells an inner HedgeTrace of the hedges sent, then
// ends the inner trace.
func (x *hedgeExec) End(err error, attempts int) {
	if a := x.answerNs.Load(); err == nil && a > 0 {
		x.h.record(time.Duration(a - 1))
	}
	var hs Hedges
	if x.hedged {
		x.mu.Lock()
		decided := x.sent
		hs = Hedges{Sent: min(decided, int(x.handed.Load())), Delay: x.delay, Start: x.armed, Won: x.won && err == nil}
		x.mu.Unlock()
		if x.picked.Load() {
			x.h.settle(hs.Won, decided-hs.Sent)
		}
	}
	if ht, ok := x.inner.(HedgeTrace); ok && hs.Sent > 0 {
		ht.Hedged(hs)
	}
	x.inner.End(err, attempts)
}

// give records h as given to one of x's requests.
func (x *hedgeExec) give(h gocql.SelectedHost) {
	x.mu.Lock()
	x.given = append(x.given, h)
	x.mu.Unlock()
}

// wasGiven says whether a host was given to one of x's requests already.
func (x *hedgeExec) wasGiven(h *gocql.HostInfo) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, g := range x.given {
		if sameHost(g.Info(), h) {
			return true
		}
	}
	return false
}

// givenHosts is the hosts given to x's requests so far, in order.
func (x *hedgeExec) givenHosts() []gocql.SelectedHost {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.given)
}

// sameHost compares hosts by identity, else by host id.
func sameHost(a, b *gocql.HostInfo) bool {
	return a == b || a != nil && b != nil && a.HostID() != "" && a.HostID() == b.HostID()
}
