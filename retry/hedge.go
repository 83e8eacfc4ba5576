package retry

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// Hedging sends a second copy of a slow write before the first has answered: a lost
// response or a stalled coordinator then costs the hedge delay, not a client timeout.
// It is safe only for what may run twice — a repeatable statement with a pinned
// timestamp, where two executions leave Cassandra as one does — so the Policy hedges
// those and nothing else (counters, list appends, LWTs and unpinned statements are
// sent once).
//
// The Policy hedges itself rather than through gocql's speculative executions
// (hedgeExec.run): the first execution runs on the caller's goroutine on gocql's plain
// path, and a timer sends a hedge — the same pinned statement, as a gocql execution of
// its own — only when one is due. gocql v1.7.0's speculative path costs every
// execution a goroutine, a ticker and a hand-off of the result, which on a busy
// three-node cluster measured 0.86× against 1.06× without it, no hedge sent (FAULTS.md);
// it also lets a speculative execution that finds no host (ErrNoConnections) win the
// race against a first execution still in flight. Here the first answer wins only
// when it is a success; when the first execution fails, hedges in flight are waited
// for.
//
// A hedge must go to another coordinator: HedgingHosts, installed as the session's
// HostSelectionPolicy, gives a hedge first the hosts none of the execution's requests
// was given, then (a single node, every other host down) those again — harmless for a
// repeatable pinned write, and what rescues a lost response on a single node. It also
// marks a first execution as picked through it: on a session without HedgingHosts,
// WithHedging sends every statement once.

// HedgeOption configures hedging (WithHedging).
type HedgeOption func(*hedgeConfig) error

type hedgeConfig struct {
	percentile float64
	floor      time.Duration
	ceiling    time.Duration
	inFlight   int
	budget     float64 // lost hedges per execution offered for hedging
}

// hedgeWindow is how many recent executions the delay is computed from, and
// hedgeEvery how often (in executions) it is recomputed.
const (
	hedgeWindow   = 256
	hedgeEvery    = 32
	hedgeMinCount = 32 // executions seen before the delay leaves the ceiling
	// hedgeBurst is how many lost hedges the budget holds when full (HedgeBudget), in
	// millionths (hedgeToken is one hedge).
	hedgeToken = 1_000_000
	hedgeBurst = 50 * hedgeToken
)

// hedgeDefaults are documented on WithHedging.
func hedgeDefaults() hedgeConfig {
	return hedgeConfig{percentile: 0.99, floor: 2 * time.Millisecond, ceiling: 250 * time.Millisecond, inFlight: 3, budget: 0.05}
}

// HedgePercentile sets the percentile of recent execution latencies after which a
// hedge is sent: 0 < q < 1 (default 0.99). The latencies are those of requests that
// answered hedged statements (see hedger in hedge.go); a hedge that overtakes a slow
// request hides that request's latency, so somewhat more than 1 − q of statements are
// hedged: 1.6–4.4% at 0.99 in a simulation, 5–6% more requests than writes on the
// project's single-node benchmark, 10% on a busy three-node cluster (FAULTS.md).
func HedgePercentile(q float64) HedgeOption {
	return func(c *hedgeConfig) error {
		if !(q > 0 && q < 1) {
			return fmt.Errorf("retry: hedge percentile %v outside (0, 1)", q)
		}
		c.percentile = q
		return nil
	}
}

// HedgeDelayBounds bounds the hedge delay: never below floor (latencies that small are
// not worth a second request), never above ceiling (also the delay before enough
// executions were seen). 0 < floor ≤ ceiling.
func HedgeDelayBounds(floor, ceiling time.Duration) HedgeOption {
	return func(c *hedgeConfig) error {
		if floor <= 0 || ceiling < floor {
			return fmt.Errorf("retry: hedge delay bounds %v, %v: want 0 < floor ≤ ceiling", floor, ceiling)
		}
		c.floor, c.ceiling = floor, ceiling
		return nil
	}
}

// HedgeMaxInFlight bounds the executions of one statement in flight at once, the first
// included: n ≥ 2 (default 3: two hedges). Hedge k is sent k delays after the first,
// while none has answered: the second rescues the write whose first request and first
// hedge both lost their responses (1% of writes when 10% of responses are lost), which
// would otherwise wait for the client timeout.
func HedgeMaxInFlight(n int) HedgeOption {
	return func(c *hedgeConfig) error {
		if n < 2 {
			return fmt.Errorf("retry: hedge max in flight %d below 2", n)
		}
		c.inFlight = n
		return nil
	}
}

// HedgeBudget bounds the hedges that lose — sent, and the first execution answered
// first anyway — to ratio of the executions offered for hedging, over time: 0 < ratio ≤ 1
// (default 0.05). Each such execution adds ratio to a budget holding at most 50 (it
// starts full); each hedge takes 1 when sent, and a hedge that wins gives its 1 back.
// While the budget is below half full, an execution waits twice the delay between its
// hedges. While it holds less than 1, hedges are last resorts: sent only at the delay
// ceiling (HedgeDelayBounds; also for an execution that found the budget empty when
// its hedge was due), for a response that will not come, and they may run the budget
// up to 50 into debt; below that nothing is hedged until executions have paid it back.
// So over N executions at most 50 + 50 + ratio×N hedges lose.
//
// A hedge that answers first (the response to the first was lost, its coordinator
// stalled) costs nothing: hedging goes on at full rate through lost responses and a
// paused node. What the budget stops is hedging as load: when every request slows at
// once (an overloaded cluster, a burst the delay has not caught up with), the hedges
// lose and would add a request to each slow write just when the cluster can least take
// it. HedgeStreams also charges hedges that won only by overtaking a slow first
// execution.
func HedgeBudget(ratio float64) HedgeOption {
	return func(c *hedgeConfig) error {
		if !(ratio > 0 && ratio <= 1) {
			return fmt.Errorf("retry: hedge budget %v outside (0, 1]", ratio)
		}
		c.budget = ratio
		return nil
	}
}

// newHedger applies opts over the defaults.
func newHedger(opts []HedgeOption) (*hedger, error) {
	c := hedgeDefaults()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	h := &hedger{cfg: c, refill: max(int64(math.Round(c.budget*hedgeToken)), 1)}
	h.delayNs.Store(int64(c.ceiling))
	h.tokens.Store(hedgeBurst)
	return h, nil
}

// hedger keeps a Policy's recent request latencies and the hedge delay drawn from
// them. The delay is read on every execution (an atomic load); samples go into a ring
// under a mutex, and every hedgeEvery samples the percentile is recomputed.
//
// A sample is the latency of the request that answered a hedged statement — the first
// execution's or a hedge's, each timed by HedgingHosts from when it was given its host
// to gocql marking that host with its result. Nothing else is a sample: not the
// statement's end-to-end time, which says how long the hedge delay was rather than how
// long requests take (fed back, it dragged the delay down in a burst of slow requests
// until most were hedged); not a request that answered after failing on the same host
// (gocql retries it without asking for a host again, so its time would include the
// failure, a client timeout perhaps, and the backoff); not a statement that is never
// hedged (an LWT, a counter, a read: a different latency, and at the 99th percentile
// three of them in the window would set the delay). Lost responses leave no sample.
// The one bias left: when a hedge overtakes a slow request, the hedge's latency is
// kept and the slow one never known, so the delay sits somewhat below the requests'
// true percentile — a review's simulation of the path gave 1.6–4.4% hedged at the
// 99th percentile, depending on how heavy the tail is.
type hedger struct {
	cfg     hedgeConfig
	delayNs atomic.Int64
	// tokens is the budget of lost hedges (HedgeBudget), in millionths of a hedge: at
	// most hedgeBurst; a hedge takes one when sent and gives it back when it wins; each
	// execution offered for hedging adds refill at its end; last resorts may take it
	// down to −hedgeBurst, a late charge (HedgeStreams) to −2×hedgeBurst.
	tokens atomic.Int64
	refill int64

	mu      sync.Mutex
	ring    [hedgeWindow]int64 // ns
	n       int                // samples written, total
	scratch [hedgeWindow]int64
}

// delay is the current hedge delay.
func (h *hedger) delay() time.Duration { return time.Duration(h.delayNs.Load()) }

// runDelay is the delay an execution starting now waits before its first hedge, and
// whether its hedges are last resorts. With the budget at least half full it is the
// delay; below half, twice the delay (hedges that lose are those sent to requests that
// were only slow: waiting longer lets more of those answer first and spares the budget
// for requests that will not answer at all). With the budget empty it is the ceiling,
// and the hedges are last resorts: a lost response then costs the ceiling rather than
// the client timeout, and hardly a request that only is slow takes that long. Last
// resorts may take the budget below empty, down to minus a full budget; below that
// nothing is hedged until the executions have paid it back.
func (h *hedger) runDelay() (time.Duration, bool) {
	d := h.delay()
	switch t := h.tokens.Load(); {
	case t < hedgeToken:
		return h.cfg.ceiling, true
	case t < hedgeBurst/2:
		return min(2*d, h.cfg.ceiling), false
	}
	return d, false
}

// record adds one request latency.
func (h *hedger) record(d time.Duration) {
	h.mu.Lock()
	h.ring[h.n%hedgeWindow] = int64(d)
	h.n++
	if h.n%hedgeEvery == 0 && h.n >= hedgeMinCount {
		h.recompute()
	}
	h.mu.Unlock()
}

// take spends one hedge of the budget, if it holds one (a last resort: if it is not a
// full budget in debt; see runDelay).
func (h *hedger) take(lastResort bool) bool {
	least := int64(hedgeToken) // what the budget must hold
	if lastResort {
		least = -hedgeBurst + hedgeToken
	}
	for {
		t := h.tokens.Load()
		if t < least {
			return false
		}
		if h.tokens.CompareAndSwap(t, t-hedgeToken) {
			return true
		}
	}
}

// settle ends one execution offered for hedging: the budget gains the refill, the
// hedge back when one won (a hedge that answered first is not charged), and those of
// hedges decided on but never sent.
func (h *hedger) settle(won bool, unsent int) {
	d := h.refill + int64(unsent)*hedgeToken
	if won {
		d += hedgeToken
	}
	for {
		t := h.tokens.Load()
		n := min(t+d, hedgeBurst)
		if n == t || h.tokens.CompareAndSwap(t, n) {
			return
		}
	}
}

// charge takes one hedge from the budget: a hedge that won only by overtaking a first
// execution whose response came after all (HedgeStreams). The charge comes late —
// hedges may have been sent meanwhile on the strength of the refund — so it may take
// the budget below empty, past the debt last resorts may run up, down to minus two
// full budgets; nothing is hedged until the executions have paid it back.
func (h *hedger) charge() {
	for {
		t := h.tokens.Load()
		n := max(t-hedgeToken, -2*hedgeBurst)
		if n == t || h.tokens.CompareAndSwap(t, n) {
			return
		}
	}
}

// recompute sets the delay to the percentile of the window, within the bounds; h.mu
// held.
func (h *hedger) recompute() {
	n := min(h.n, hedgeWindow)
	s := h.scratch[:n]
	copy(s, h.ring[:n])
	slices.Sort(s)
	next := time.Duration(s[percentileIndex(h.cfg.percentile, n)])
	h.delayNs.Store(int64(max(h.cfg.floor, min(next, h.cfg.ceiling))))
}

// percentileIndex is the index of the q-th percentile in n sorted samples (n ≥ 1).
func percentileIndex(q float64, n int) int {
	return max(0, min(int(q*float64(n)+0.999999)-1, n-1))
}

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

// HedgeStreams is a gocql.StreamObserver for the session of a hedging Policy, which
// passes everything on to next (nil: nothing else observes streams):
//
//	cluster.StreamObserver = retry.HedgeStreams(cluster.StreamObserver)
//
// With it the budget (HedgeBudget) tells a hedge that rescued a write — no response to
// the first execution has come by the time the connection is closed — from one that
// only overtook a first execution whose response came after all: the second costs the
// budget like a hedge that lost. Both cut the latency of the write; only the first
// saves work. Where nodes share CPU, or one node is overloaded, hedges overtake slow
// requests at a high rate and each adds a write to the cluster: without HedgeStreams
// they cost nothing from the budget and are not bounded.
//
// gocql reports a response that came after its request was cancelled, however late:
// a coordinator that resumes after a pause and answers its backlog charges the budget
// for every write hedged away from it during the pause, at once (down to two full
// budgets in debt, and nothing is hedged until the executions have paid it back). On
// a lossy network, or when nodes pause, that spends budget the lost responses need:
// FAULTS.md measures both.
func HedgeStreams(next gocql.StreamObserver) gocql.StreamObserver {
	return hedgeStreams{next: next}
}

type hedgeStreams struct{ next gocql.StreamObserver }

// StreamContext follows the streams of first executions the Policy hedges, and gives
// next its own.
func (o hedgeStreams) StreamContext(ctx context.Context) gocql.StreamObserverContext {
	var nc gocql.StreamObserverContext
	if o.next != nil {
		nc = o.next.StreamContext(ctx)
	}
	if ctx == nil {
		return nc
	}
	x, _ := ctx.Value(hedgeKey{}).(*hedgeExec)
	switch {
	case x == nil:
		return nc
	case nc == nil:
		return (*hedgeStream)(x)
	}
	return hedgeStreamAnd{x: (*hedgeStream)(x), next: nc}
}

// hedgeStream is a first execution's stream, seen by HedgeStreams.
type hedgeStream hedgeExec

func (*hedgeStream) StreamStarted(gocql.ObservedStream)   {}
func (*hedgeStream) StreamAbandoned(gocql.ObservedStream) {}

// StreamFinished: a response came, or gocql gave the stream up before writing the
// request (its context cancelled while queued). Charged once, when a hedge had won
// and the first execution had already returned: a response that came after all. A
// stream released while the first still runs is not one (a request cancelled before
// it was written, because the hedge won, never reached a coordinator).
func (s *hedgeStream) StreamFinished(gocql.ObservedStream) {
	x := (*hedgeExec)(s)
	x.mu.Lock()
	late := x.won && x.done
	x.mu.Unlock()
	if late && x.overtaken.CompareAndSwap(false, true) {
		x.h.charge()
	}
}

// hedgeStreamAnd is a first execution's stream seen by HedgeStreams and by next.
type hedgeStreamAnd struct {
	x    *hedgeStream
	next gocql.StreamObserverContext
}

func (h hedgeStreamAnd) StreamStarted(o gocql.ObservedStream) { h.next.StreamStarted(o) }
func (h hedgeStreamAnd) StreamAbandoned(o gocql.ObservedStream) {
	h.next.StreamAbandoned(o)
}
func (h hedgeStreamAnd) StreamFinished(o gocql.ObservedStream) {
	h.x.StreamFinished(o)
	h.next.StreamFinished(o)
}

// HedgingHosts wraps a session's host selection policy so that the Policy can hedge
// (WithHedging): install it as cluster.PoolConfig.HostSelectionPolicy, outermost, e.g.
//
//	cluster.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()))
//
// It picks hosts exactly as inner does, except for executions the Policy hedges: a
// first execution's iterator, once inner has no further host, hands out hosts it
// already gave that are still up, within a bound (so that a retry WithTimeoutsOnNextHost
// finds one on a single node); a hedge's gives the hosts inner would that none of the
// execution's requests was given, then those given that are up. On a single node a
// hedge therefore goes to the same node. Statements the Policy does not hedge see
// inner's iterator unchanged. nil inner is an error at session creation in gocql;
// HedgingHosts(nil) returns nil.
func HedgingHosts(inner gocql.HostSelectionPolicy) gocql.HostSelectionPolicy {
	if inner == nil {
		return nil
	}
	if r, ok := inner.(gocql.ReadyPolicy); ok {
		return readyHedgingHosts{hedgingHosts{inner}, r}
	}
	return hedgingHosts{inner}
}

// hedgingHosts forwards everything to the wrapped policy but Pick.
type hedgingHosts struct{ gocql.HostSelectionPolicy }

// readyHedgingHosts keeps the wrapped policy's Ready, which gocql checks by type.
type readyHedgingHosts struct {
	hedgingHosts
	r gocql.ReadyPolicy
}

func (p readyHedgingHosts) Ready() bool { return p.r.Ready() }

// AddHosts keeps gocql's bulk add when the wrapped policy has one.
func (p hedgingHosts) AddHosts(hosts []*gocql.HostInfo) {
	if b, ok := p.HostSelectionPolicy.(interface{ AddHosts([]*gocql.HostInfo) }); ok {
		b.AddHosts(hosts)
		return
	}
	for _, h := range hosts {
		p.HostSelectionPolicy.AddHost(h)
	}
}

// Pick is the wrapped policy's iterator; for the first execution of a statement the
// Policy hedges, it does not run dry while a host it gave is up, and for a hedge it
// gives first the hosts the execution's earlier requests were not given.
func (p hedgingHosts) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	next := p.HostSelectionPolicy.Pick(q)
	if q == nil {
		return next
	}
	ctx := q.Context()
	if ctx == nil {
		return next
	}
	if x, _ := ctx.Value(hedgeOfKey{}).(*hedgeExec); x != nil {
		return hedgeHosts(next, maxRetries, x)
	}
	x, _ := ctx.Value(hedgeKey{}).(*hedgeExec)
	if x == nil {
		return next
	}
	x.picked.Store(true)
	return hedgeIterator(next, maxRetries, x)
}

// maxRetries bounds the re-used hosts an execution's own retries may take (a retry
// WithTimeoutsOnNextHost asks for the next host; on a single node it is the same one).
// The iterator cannot see the Policy's max attempts; more than this many retries on
// the next host is not a configuration anybody needs.
const maxRetries = 16

// hedgeIterator is next, then up to extra hosts next gave, again, in the order given;
// nil once next is done and no given host is up or extra is spent. gocql calls it from
// the one goroutine that runs the execution. Each host it hands out is recorded in x
// and times its request for x (nil: neither): gocql takes a host just before it sends,
// and marks it with the result.
func hedgeIterator(next gocql.NextHost, extra int, x *hedgeExec) gocql.NextHost {
	var given []gocql.SelectedHost
	done := false
	i := 0
	return func() gocql.SelectedHost {
		if !done {
			if h := next(); h != nil {
				given = append(given, h)
				return timed(h, x)
			}
			done = true
		}
		for tries := 0; extra > 0 && tries < len(given); tries++ {
			h := given[i%len(given)]
			i++
			if info := h.Info(); info != nil && info.IsUp() {
				extra--
				return timed(h, x)
			}
		}
		return nil
	}
}

// hedgeHosts is a hedge's iterator: next's hosts that none of x's requests was given
// yet, then the up hosts they were given (the same coordinator again, on a single
// node), the first execution's last, at most extra+1 of those.
func hedgeHosts(next gocql.NextHost, extra int, x *hedgeExec) gocql.NextHost {
	var again []gocql.SelectedHost
	done, first := false, true
	i := 0
	give := func(h gocql.SelectedHost) gocql.SelectedHost {
		if first {
			first = false
			x.handed.Add(1)
		}
		return timed(h, x)
	}
	return func() gocql.SelectedHost {
		for !done {
			h := next()
			if h == nil {
				done = true
				// The first execution's host last: it is the one found slow.
				if again = x.givenHosts(); len(again) > 1 {
					again = append(again[1:], again[0])
				}
				break
			}
			if !x.wasGiven(h.Info()) {
				return give(h)
			}
		}
		for tries := 0; extra >= 0 && tries < len(again); tries++ {
			h := again[i%len(again)]
			i++
			if info := h.Info(); info != nil && info.IsUp() {
				extra--
				return give(h)
			}
		}
		return nil
	}
}

// timed records h as given to a request of x and wraps it to time that request; h
// itself when x is nil.
func timed(h gocql.SelectedHost, x *hedgeExec) gocql.SelectedHost {
	if x == nil {
		return h
	}
	x.give(h)
	return &timedHost{SelectedHost: h, x: x, at: time.Now()}
}

// timedHost is a host given to one request of a hedged execution, with when.
type timedHost struct {
	gocql.SelectedHost
	x      *hedgeExec
	at     time.Time
	failed atomic.Bool // marked with an error: a later answer on it is a retry, not timed
}

// Mark passes the request's result on and, for the first request of the execution to
// succeed, keeps its latency. gocql marks nil for an answer and also for a request it
// cancelled (context.Canceled): the one overtaken by the answer is marked after it, as
// gocql cancels the others only once it returned the answer.
//
// gocql retries on the same host (RetryType Retry) without asking the iterator for one:
// the same timedHost is marked again, and its time since the hand-out would count the
// failure and the backoff. An answer after an error on it is therefore not timed.
func (t *timedHost) Mark(err error) {
	t.SelectedHost.Mark(err)
	switch {
	case err != nil:
		t.failed.Store(true)
	case !t.failed.Load():
		t.x.answerNs.CompareAndSwap(0, int64(time.Since(t.at))+1)
	}
}
