package hedge

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// firstKey carries an execution's *Exec in the context of its first execution,
// hedgeOfKey in a hedge's, for HedgingHosts (Pick) and HedgeStreams (First).
type (
	firstKey   struct{}
	hedgeOfKey struct{}
)

// Exec is one execution under a hedging Policy: the first execution runs on the
// caller's goroutine (the driver's plain path: no goroutine, no ticker), and a timer
// sends each hedge, on a goroutine of its own, when it is due and the first has not
// answered (Run). It also wraps the execution's Trace to record its latency and tell of
// its hedges. S is the driver's selected host.
type Exec[S comparable] struct {
	H      *Hedger[S]
	inner  engine.Trace
	Start  time.Time
	hedged bool        // repeatable and pinned: may be hedged
	SameDC bool        // a LOCAL_* consistency: hedges only to the first host's data centre (Hosts)
	Picked atomic.Bool // the first execution's host selection went through HedgingHosts
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
	// Handed counts the hedges that were given a host (the driver asks just before it
	// sends): a hedge fire decided on but cancelled before that never left.
	Handed atomic.Int32

	mu         sync.Mutex
	given      []S // hosts given to the execution's requests, in order
	again      func(context.Context) error
	timer      *time.Timer
	Delay      time.Duration
	lastResort bool      // the budget was empty: hedges at the ceiling (RunDelay)
	Armed      time.Time // when the timer was first set
	Done       bool      // the first execution returned: no further hedge
	Sent       int       // hedges sent
	Won        bool      // a hedge answered, with success, before the first execution did
	results    chan error
	cancels    []context.CancelFunc // of the hedges
}

// Begin starts one execution's latency record and, when it may be hedged (repeatable
// and pinned), returns the Exec to run it with and the context its first execution
// must run with (cancelled when a hedge answers first). cl is the execution's
// consistency by name: under LOCAL_ONE, LOCAL_QUORUM or LOCAL_SERIAL its hedges stay in
// the data centre of its first host (SameDC). A nil Hedger (no WithHedging) changes
// nothing.
func (h *Hedger[S]) Begin(ctx context.Context, tr engine.Trace, repeatable bool, cl string) (context.Context, engine.Trace, *Exec[S]) {
	if h == nil {
		return ctx, tr, nil
	}
	x := &Exec[S]{H: h, inner: tr, Start: time.Now(), hedged: repeatable, SameDC: strings.HasPrefix(cl, "LOCAL_")}
	if !repeatable {
		return ctx, x, nil
	}
	x.base = context.WithValue(ctx, hedgeOfKey{}, x)
	first, cancel := context.WithCancel(context.WithValue(ctx, firstKey{}, x))
	x.cancelFirst = cancel
	return first, x, x
}

// First is the Exec whose first execution runs with ctx, else nil.
func First[S comparable](ctx context.Context) *Exec[S] {
	if ctx == nil {
		return nil
	}
	x, _ := ctx.Value(firstKey{}).(*Exec[S])
	return x
}

// Run executes first — the first execution, on the caller's goroutine — and, while it
// has not returned, sends again (the same statement with the context it is given, on
// the next host: HedgingHosts) as a hedge every delay, up to HedgeMaxInFlight − 1
// hedges, each only if the first execution was picked through HedgingHosts and the
// budget holds a hedge. The first answer wins: a hedge's success cancels the first
// execution and is the result; the first's success cancels the hedges. When the first
// fails, the hedges in flight are waited for: any success is the result, else the
// first's error, with the hedges' errors (none: none sent). A nil or unhedged x just
// runs first. Whatever is still in flight when the result is known is cancelled and
// waited for.
func (x *Exec[S]) Run(first func() error, again func(context.Context) error) (hedgeErrs []error, err error) {
	if x == nil || !x.hedged {
		return nil, first()
	}
	defer x.cancelFirst()
	x.mu.Lock()
	x.again = again
	x.Delay, x.lastResort = x.H.RunDelay()
	x.Armed = time.Now()
	x.timer = time.AfterFunc(x.Delay, x.fire)
	x.mu.Unlock()

	err = first()

	x.mu.Lock()
	x.Done = true
	x.timer.Stop()
	won, n := x.Won, x.Sent
	x.mu.Unlock()
	got := 0
	if err != nil && !won {
		for got < n { // the first failed: a hedge in flight may still succeed
			e := <-x.results
			got++
			if e == nil {
				x.mu.Lock()
				x.Won = true
				x.mu.Unlock()
				won = true
				break
			}
			hedgeErrs = append(hedgeErrs, e)
		}
	}
	// End what is still in flight, and wait for it: nothing of the execution runs
	// once Run has returned (no Attempt after End, no context left registered).
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
func (x *Exec[S]) cancelHedges() {
	x.mu.Lock()
	cancels := x.cancels
	x.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// fire sends one hedge when it is due (the timer's goroutine runs it, and the hedge).
func (x *Exec[S]) fire() {
	x.mu.Lock()
	if x.Done || x.Sent >= x.H.Cfg.InFlight-1 || !x.Picked.Load() {
		x.mu.Unlock()
		return
	}
	ok := x.H.Take(x.lastResort)
	if !ok && !x.lastResort {
		// The budget ran dry since the execution started: its hedge becomes a last
		// resort, at the ceiling (RunDelay).
		x.lastResort = true
		if wait := x.H.Cfg.Ceiling - time.Since(x.Armed); wait > 0 {
			x.timer.Reset(wait)
			x.mu.Unlock()
			return
		}
		ok = x.H.Take(true)
	}
	if !ok {
		x.mu.Unlock()
		return
	}
	x.Sent++
	if x.results == nil {
		x.results = make(chan error, x.H.Cfg.InFlight-1)
	}
	ctx, cancel := context.WithCancel(x.base)
	x.cancels = append(x.cancels, cancel)
	if x.Sent < x.H.Cfg.InFlight-1 {
		x.timer.Reset(x.Delay)
	}
	again := x.again
	x.mu.Unlock()

	err := again(ctx)
	if err == nil {
		x.mu.Lock()
		if !x.Done {
			x.Won = true
			x.cancelFirst()
		}
		x.mu.Unlock()
	}
	x.results <- err
}

func (x *Exec[S]) Attempt(ev engine.Event) { x.inner.Attempt(ev) }

// End records the latency of the request that answered (when HedgingHosts timed one:
// see Hedger), settles the budget, tells an inner HedgeTrace of the hedges sent, then
// ends the inner trace.
func (x *Exec[S]) End(err error, attempts int) {
	if a := x.answerNs.Load(); err == nil && a > 0 {
		x.H.Record(time.Duration(a - 1))
	}
	var hs engine.Hedges
	if x.hedged {
		x.mu.Lock()
		decided := x.Sent
		hs = engine.Hedges{Sent: min(decided, int(x.Handed.Load())), Delay: x.Delay, Start: x.Armed, Won: x.Won && err == nil}
		x.mu.Unlock()
		if x.Picked.Load() {
			x.H.settle(hs.Won, decided-hs.Sent)
		}
	}
	if ht, ok := x.inner.(engine.HedgeTrace); ok && hs.Sent > 0 {
		ht.Hedged(hs)
	}
	x.inner.End(err, attempts)
}

// StreamFinished is HedgeStreams hearing that a stream of x's first execution
// finished: a response came, or the driver gave the stream up before writing the
// request (its context cancelled while queued). Charged once, when a hedge had won and
// the first execution had already returned: a response that came after all. A stream
// released while the first still runs is not one (a request cancelled before it was
// written, because the hedge won, never reached a coordinator).
func (x *Exec[S]) StreamFinished() {
	x.mu.Lock()
	late := x.Won && x.Done
	x.mu.Unlock()
	if late && x.overtaken.CompareAndSwap(false, true) {
		x.H.charge()
	}
}

// give records h as given to one of x's requests.
func (x *Exec[S]) give(h S) {
	x.mu.Lock()
	x.given = append(x.given, h)
	x.mu.Unlock()
}

// wasGiven says whether a host was given to one of x's requests already.
func (x *Exec[S]) wasGiven(h S) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, g := range x.given {
		if x.H.ops.Same(g, h) {
			return true
		}
	}
	return false
}

// inDC says whether h may take a hedge of x: always, unless x stays in the data centre
// of its first host (SameDC) and h is known to be in another.
func (x *Exec[S]) inDC(h S) bool {
	if !x.SameDC || x.H.ops.DC == nil {
		return true
	}
	x.mu.Lock()
	var first S
	if len(x.given) > 0 {
		first = x.given[0]
	}
	x.mu.Unlock()
	var none S
	if first == none {
		return true
	}
	a, b := x.H.ops.DC(first), x.H.ops.DC(h)
	return a == "" || b == "" || a == b
}

// givenHosts is the hosts given to x's requests so far, in order.
func (x *Exec[S]) givenHosts() []S {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.given)
}
