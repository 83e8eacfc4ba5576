package retry

import (
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

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
