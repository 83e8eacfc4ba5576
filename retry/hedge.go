package retry

import (
	"context"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/hedge"
)

// Hedging (WithHedging) is internal/core/hedge's, on gocql's hosts: why the Policy
// hedges itself rather than through gocql's speculative executions, and how a hedge
// finds another coordinator, is told there. This file maps gocql's host selection and
// stream observers onto it.

// HedgeOption configures hedging (WithHedging).
type HedgeOption = hedge.Option

// HedgePercentile sets the percentile of recent execution latencies after which a
// hedge is sent: 0 < q < 1 (default 0.99). The latencies are those of requests that
// answered hedged statements (see hedge.Hedger in internal/core/hedge); a hedge that overtakes a slow
// request hides that request's latency, so somewhat more than 1 − q of statements are
// hedged: 1.6–4.4% at 0.99 in a simulation, 5–6% more requests than writes on the
// project's single-node benchmark, 10% on a busy three-node cluster (FAULTS.md).
func HedgePercentile(q float64) HedgeOption { return hedge.Percentile(q) }

// HedgeDelayBounds bounds the hedge delay: never below floor (latencies that small are
// not worth a second request), never above ceiling (also the delay before enough
// executions were seen). 0 < floor ≤ ceiling.
func HedgeDelayBounds(floor, ceiling time.Duration) HedgeOption {
	return hedge.DelayBounds(floor, ceiling)
}

// HedgeMaxInFlight bounds the executions of one statement in flight at once, the first
// included: n ≥ 2 (default 3: two hedges). Hedge k is sent k delays after the first,
// while none has answered: the second rescues the write whose first request and first
// hedge both lost their responses (1% of writes when 10% of responses are lost), which
// would otherwise wait for the client timeout.
func HedgeMaxInFlight(n int) HedgeOption { return hedge.MaxInFlight(n) }

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
func HedgeBudget(ratio float64) HedgeOption { return hedge.Budget(ratio) }

type (
	hedger    = hedge.Hedger[gocql.SelectedHost]
	hedgeExec = hedge.Exec[gocql.SelectedHost]
)

// hostOps is how hedging reads and wraps gocql's selected hosts.
var hostOps = &hedge.Ops[gocql.SelectedHost]{
	Up: func(h gocql.SelectedHost) bool {
		info := h.Info()
		return info != nil && info.IsUp()
	},
	Same: func(a, b gocql.SelectedHost) bool { return sameHost(a.Info(), b.Info()) },
	Timed: func(h gocql.SelectedHost) (gocql.SelectedHost, *hedge.Timing) {
		t := &timedHost{SelectedHost: h}
		return t, &t.Timing
	},
	DC: func(h gocql.SelectedHost) string {
		if info := h.Info(); info != nil {
			return info.DataCenter()
		}
		return ""
	},
}

// newHedger applies opts over the defaults.
func newHedger(opts []HedgeOption) (*hedger, error) { return hedge.New(opts, hostOps) }

// sameHost compares hosts by identity, else by host id.
func sameHost(a, b *gocql.HostInfo) bool {
	return a == b || a != nil && b != nil && a.HostID() != "" && a.HostID() == b.HostID()
}

// timedHost is a host given to one request of a hedged execution: gocql's Mark reaches
// the request's Timing too (see hedge.Timing.Mark).
type timedHost struct {
	gocql.SelectedHost
	hedge.Timing
}

func (t *timedHost) Mark(err error) {
	t.SelectedHost.Mark(err)
	t.Timing.Mark(err)
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
// inner's iterator unchanged. A nil inner is the driver's default for a nil policy,
// round robin, so that cluster.PoolConfig.HostSelectionPolicy =
// retry.HedgingHosts(cluster.PoolConfig.HostSelectionPolicy) hedges on a fresh cluster
// configuration too.
func HedgingHosts(inner gocql.HostSelectionPolicy) gocql.HostSelectionPolicy {
	if inner == nil {
		inner = gocql.RoundRobinHostPolicy()
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

// Pick is the wrapped policy's iterator, made a hedged execution's (hedge.Pick).
func (p hedgingHosts) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	next := p.HostSelectionPolicy.Pick(q)
	if q == nil {
		return next
	}
	return hedge.Pick[gocql.SelectedHost](q.Context(), next)
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
	x := hedge.First[gocql.SelectedHost](ctx)
	switch {
	case x == nil:
		return nc
	case nc == nil:
		return hedgeStream{x}
	}
	return hedgeStreamAnd{x: hedgeStream{x}, next: nc}
}

// hedgeStream is a first execution's stream, seen by HedgeStreams.
type hedgeStream struct{ x *hedgeExec }

func (hedgeStream) StreamStarted(gocql.ObservedStream)    {}
func (hedgeStream) StreamAbandoned(gocql.ObservedStream)  {}
func (s hedgeStream) StreamFinished(gocql.ObservedStream) { s.x.StreamFinished() }

// hedgeStreamAnd is a first execution's stream seen by HedgeStreams and by next.
type hedgeStreamAnd struct {
	x    hedgeStream
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
