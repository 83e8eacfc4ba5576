package retry

import (
	"context"

	"github.com/gocql/gocql"
)

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

func (*hedgeStream) StreamStarted(gocql.ObservedStream) {}

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
