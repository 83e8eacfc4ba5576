package retry

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// Hedging sends a second copy of a slow write before the first has answered: a lost
// response or a stalled coordinator then costs the hedge delay, not a client timeout.
// It is safe only for what may run twice — a repeatable statement with a pinned
// timestamp, where two executions leave Cassandra as one does — so the Policy gives a
// speculative execution policy to those and to nothing else (counters, list appends,
// LWTs and unpinned statements are sent once).
//
// gocql v1.7.0 runs speculative executions on the query's host iterator, shared with
// the first execution. One that finds the iterator exhausted (a single node, or every
// other host already used or down) fails at once with ErrNoConnections, and that
// result can win the race against a first execution still in flight: hedging would
// turn a slow write into a failed one. HedgingHosts closes that hole from the host
// selection side: installed as the session's HostSelectionPolicy, it hands an exhausted
// iterator of a hedged execution an up host it already gave (the same coordinator
// again — harmless for a repeatable pinned write, and what rescues a lost response on a
// single node) instead of nothing, within a bound; and a hedged execution is marked as
// having been picked through it. The Policy hedges only executions so marked: on a
// session without HedgingHosts, WithHedging sends every statement once.

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
	// thousandths (hedgeToken is one hedge).
	hedgeToken = 1000
	hedgeBurst = 10 * hedgeToken
)

// hedgeDefaults are documented on WithHedging.
func hedgeDefaults() hedgeConfig {
	return hedgeConfig{percentile: 0.99, floor: 2 * time.Millisecond, ceiling: 250 * time.Millisecond, inFlight: 2, budget: 0.05}
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
// included: n ≥ 2 (default 2, one hedge). gocql sends hedge k after k delays.
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
// (default 0.05). Each such execution adds ratio to a budget holding at most 10, each
// lost hedge takes 1, and an execution that starts with less than 1 in it is sent once.
// A hedge that answers first (the response to the first was lost, its coordinator
// stalled) costs nothing: hedging goes on at full rate through lost responses and a
// paused node. What the budget stops is hedging as load: when every request slows at
// once (an overloaded cluster, a burst the delay has not caught up with), the hedges
// lose and would add a request to each slow write just when the cluster can least take
// it.
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
	h := &hedger{cfg: c, refill: int64(c.budget * hedgeToken)}
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
	// tokens is the budget of lost hedges (HedgeBudget), in thousandths of a hedge: at
	// most hedgeBurst, refill added per execution offered for hedging. It goes below 0
	// when executions that started with budget all lose their hedges; no execution is
	// hedged until it is back at one hedge.
	tokens atomic.Int64
	refill int64

	mu      sync.Mutex
	ring    [hedgeWindow]int64 // ns
	n       int                // samples written, total
	scratch [hedgeWindow]int64
}

// delay is the current hedge delay.
func (h *hedger) delay() time.Duration { return time.Duration(h.delayNs.Load()) }

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

// settle accounts for one execution offered for hedging that sent hedges and of which
// lost lost the race: the budget gains the refill and loses a token per lost hedge.
func (h *hedger) settle(lost int) {
	d := h.refill - int64(lost)*hedgeToken
	for {
		t := h.tokens.Load()
		n := min(t+d, hedgeBurst)
		if n == t || h.tokens.CompareAndSwap(t, n) {
			return
		}
	}
}

// allow says whether an execution starting now may be hedged: the budget holds a hedge.
func (h *hedger) allow() bool { return h.tokens.Load() >= hedgeToken }

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

// hedgeKey carries an execution's *hedgeExec in its context, for HedgingHosts.
type hedgeKey struct{}

// hedgeExec is one execution under a hedging Policy: its speculative execution policy
// (when repeatable and pinned) and the wrapper of its Trace that records its latency.
type hedgeExec struct {
	h      *hedger
	inner  Trace
	start  time.Time
	hedged bool        // repeatable and pinned: offered to gocql for speculation
	picked atomic.Bool // the session's host selection went through HedgingHosts
	// attempts is what Attempts answers, decided on its first call: 1 + the hedges
	// (0: not decided yet; 1: none — not picked, or the budget was empty).
	attempts atomic.Int32
	delayNs  atomic.Int64
	timedNs  atomic.Int64 // when gocql asked for the delay (and started its ticker), ns after start
	// answerNs is 1 + the latency of the first request that answered (HedgingHosts
	// times each request); 0 until one did. answerIdx is which request that was, in
	// the order HedgingHosts gave their hosts (0: the first execution's first).
	answerNs  atomic.Int64
	answerIdx atomic.Int32
	// returnedNs is when gocql returned the execution's result, ns after start (0:
	// not yet): hedges are counted up to then, not up to End.
	returnedNs atomic.Int64
}

// returned tells tr's execution, when it is hedged, that gocql has returned its
// result: what follows (settling an unknown outcome, an outbox write) is no time in
// which a hedge could be sent.
func returned(tr Trace) {
	if x, ok := tr.(*hedgeExec); ok {
		x.returnedNs.CompareAndSwap(0, int64(time.Since(x.start)))
	}
}

var (
	_ gocql.SpeculativeExecutionPolicy = (*hedgeExec)(nil)
	_ Trace                            = (*hedgeExec)(nil)
)

// begin starts one execution's latency record and, when it may be hedged (repeatable
// and pinned), returns the speculative execution policy to set on the pinned copy,
// with the context the copy must run with. A nil hedger (no WithHedging) changes
// nothing.
func (h *hedger) begin(ctx context.Context, tr Trace, repeatable bool) (context.Context, Trace, gocql.SpeculativeExecutionPolicy) {
	if h == nil {
		return ctx, tr, nil
	}
	x := &hedgeExec{h: h, inner: tr, start: time.Now(), hedged: repeatable}
	if !repeatable {
		return ctx, x, nil
	}
	return context.WithValue(ctx, hedgeKey{}, x), x, x
}

// Attempts is the number of hedges: none unless the host selection went through
// HedgingHosts, which gocql consults (Pick) before asking, and none when the budget of
// lost hedges is spent (HedgeBudget). gocql asks before it starts the execution, and
// again before each hedge: the first answer holds for the execution. With none, gocql
// runs the execution on the caller's goroutine, with no timer.
func (x *hedgeExec) Attempts() int {
	if a := x.attempts.Load(); a > 0 {
		return int(a) - 1
	}
	a := int32(1)
	if x.picked.Load() && x.h.allow() {
		a = int32(x.h.cfg.inFlight)
	}
	if !x.attempts.CompareAndSwap(0, a) {
		a = x.attempts.Load()
	}
	return int(a) - 1
}

// Delay is the Policy's current hedge delay; gocql asks once per execution, just
// after launching the first execution and before starting the ticker that sends the
// hedges. The moment is kept for HedgeTrace: no hedge starts before it plus the delay.
func (x *hedgeExec) Delay() time.Duration {
	d := x.h.delay()
	x.delayNs.Store(int64(d))
	x.timedNs.Store(int64(time.Since(x.start)))
	return d
}

func (x *hedgeExec) Attempt(ev Event) { x.inner.Attempt(ev) }

// End records the latency of the request that answered (when HedgingHosts timed one:
// see hedger), tells an inner HedgeTrace of the
// hedges sent, then ends the inner trace.
func (x *hedgeExec) End(err error, attempts int) {
	if a := x.answerNs.Load(); err == nil && a > 0 {
		x.h.record(time.Duration(a - 1))
	}
	hs, sent := x.hedges()
	if x.hedged && x.picked.Load() {
		lost := hs.Sent
		if hs.Won = sent && err == nil && x.answerNs.Load() > 0 && x.answerIdx.Load() > 0; hs.Won {
			lost--
		}
		x.h.settle(lost)
	}
	if ht, ok := x.inner.(HedgeTrace); ok && sent {
		ht.Hedged(hs)
	}
	x.inner.End(err, attempts)
}

// hedges is what gocql sent besides the first execution, as far as timing tells: its
// ticker sends hedge k at k delays after the delay was asked for, while no answer has
// come, up to Attempts. It counts from now, when the execution has ended: an answer
// that came within the last microseconds before a tick is taken for one after it.
func (x *hedgeExec) hedges() (Hedges, bool) {
	if !x.hedged || !x.picked.Load() || x.attempts.Load() <= 1 {
		return Hedges{}, false
	}
	delay, timed := time.Duration(x.delayNs.Load()), time.Duration(x.timedNs.Load())
	if delay <= 0 {
		return Hedges{}, false // gocql never asked: it did not speculate
	}
	start := x.start.Add(timed) // monotonic, as x.start
	end := time.Since(x.start)
	if r := x.returnedNs.Load(); r > 0 {
		end = time.Duration(r)
	}
	sent := min(int64(x.h.cfg.inFlight-1), int64((end-timed)/delay))
	if sent < 1 {
		return Hedges{}, false
	}
	return Hedges{Sent: int(sent), Delay: delay, Start: start}, true
}

// HedgingHosts wraps a session's host selection policy so that the Policy can hedge
// (WithHedging): install it as cluster.PoolConfig.HostSelectionPolicy, outermost, e.g.
//
//	cluster.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()))
//
// It picks hosts exactly as inner does. For an execution the Policy hedges, once inner
// has no further host it hands out hosts it already gave that are still up, at most as
// many times as hedges and retries of that execution can ask (a speculative execution
// that finds no host would otherwise fail the whole statement; see the package note on
// hedging in hedge.go). On a single node a hedge therefore goes to the same node, and
// so does a retry WithTimeoutsOnNextHost would send to the next host. Statements the
// Policy does not hedge see inner's iterator unchanged. nil inner is an error at
// session creation in gocql; HedgingHosts(nil) returns nil.
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

// Pick is the wrapped policy's iterator; for a hedged execution it does not run dry
// while a host it gave is up.
func (p hedgingHosts) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	next := p.HostSelectionPolicy.Pick(q)
	if q == nil {
		return next
	}
	ctx := q.Context()
	if ctx == nil {
		return next
	}
	x, _ := ctx.Value(hedgeKey{}).(*hedgeExec)
	if x == nil {
		return next
	}
	x.picked.Store(true)
	return hedgeIterator(next, x.h.cfg.inFlight-1+maxRetries, x)
}

// maxRetries bounds the re-used hosts a hedged execution's own retries may take.
// Executions share their attempts, so the Policy's max attempts would be exact; the
// iterator cannot see the Policy, and more than this many retries on the next host is
// not a configuration anybody needs.
const maxRetries = 16

// hedgeIterator is next, then up to extra hosts next gave, again, in the order given;
// nil once next is done and no given host is up or extra is spent. gocql serialises
// calls when it speculates. Each host it hands out times its request for x (nil: not
// timed): gocql takes a host just before it sends, and marks it with the result.
func hedgeIterator(next gocql.NextHost, extra int, x *hedgeExec) gocql.NextHost {
	var given []gocql.SelectedHost
	done := false
	i, handed := 0, int32(0)
	timed := func(h gocql.SelectedHost) gocql.SelectedHost {
		if x == nil {
			return h
		}
		handed++
		return &timedHost{SelectedHost: h, x: x, at: time.Now(), idx: handed - 1}
	}
	return func() gocql.SelectedHost {
		if !done {
			if h := next(); h != nil {
				given = append(given, h)
				return timed(h)
			}
			done = true
		}
		for tries := 0; extra > 0 && tries < len(given); tries++ {
			h := given[i%len(given)]
			i++
			if info := h.Info(); info != nil && info.IsUp() {
				extra--
				return timed(h)
			}
		}
		return nil
	}
}

// timedHost is a host given to one request of a hedged execution, with when.
type timedHost struct {
	gocql.SelectedHost
	x      *hedgeExec
	at     time.Time
	idx    int32       // its place in the hand-outs of the execution, from 0
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
		if t.x.answerNs.CompareAndSwap(0, int64(time.Since(t.at))+1) {
			t.x.answerIdx.Store(t.idx)
		}
	}
}
