package hedge

import (
	"context"
	"slices"
	"sync/atomic"
	"time"
)

// Ops is what hedging needs to know of a driver's selected host S (the zero S is "no
// host"): whether it is known and up, whether two are the same host (by identity, else
// by host id), and S wrapped so that the driver's Mark on it reaches a Timing — the
// wrapper holds the Timing (one allocation per host handed out) and returns it, for
// hedging to set.
type Ops[S comparable] struct {
	Up    func(S) bool
	Same  func(a, b S) bool
	Timed func(S) (S, *Timing)
	DC    func(S) string // the host's data centre, "" when not known
}

// MaxRetries bounds the re-used hosts an execution's own retries may take (a retry
// WithTimeoutsOnNextHost asks for the next host; on a single node it is the same one).
// The iterator cannot see the Policy's max attempts; more than this many retries on
// the next host is not a configuration anybody needs.
const MaxRetries = 16

// Pick is what HedgingHosts makes of the wrapped policy's iterator next for an
// execution run with ctx: for the first execution of a statement the Policy hedges, an
// iterator that does not run dry while a host it gave is up (Iterator); for a hedge,
// one that gives first the hosts the execution's earlier requests were not given
// (Hosts); next itself for everything else.
func Pick[S comparable](ctx context.Context, next func() S) func() S {
	if ctx == nil {
		return next
	}
	if x, _ := ctx.Value(hedgeOfKey{}).(*Exec[S]); x != nil {
		return Hosts(next, MaxRetries, x)
	}
	x, _ := ctx.Value(firstKey{}).(*Exec[S])
	if x == nil {
		return next
	}
	x.Picked.Store(true)
	return Iterator(next, MaxRetries, x, x.H.ops)
}

// Iterator is next, then up to extra hosts next gave, again, in the order given; the
// zero S once next is done and no given host is up or extra is spent. Under a LOCAL_*
// consistency (x.SameDC) it skips next's hosts of another data centre than the first
// one's: the execution's own retries on the next host stay there, as its hedges do.
// The driver calls it from the one goroutine that runs the execution. Each host it
// hands out is recorded in x and times its request for x (nil: neither): the driver
// takes a host just before it sends, and marks it with the result.
func Iterator[S comparable](next func() S, extra int, x *Exec[S], ops *Ops[S]) func() S {
	var given []S
	var none S
	done := false
	i := 0
	return func() S {
		for !done {
			h := next()
			if h == none {
				done = true
				break
			}
			if x != nil && !x.inDC(h) {
				continue // under LOCAL_*, a retry on the next host stays in the first host's data centre
			}
			given = append(given, h)
			return timed(h, x, ops)
		}
		for tries := 0; extra > 0 && tries < len(given); tries++ {
			h := given[i%len(given)]
			i++
			if ops.Up(h) {
				extra--
				return timed(h, x, ops)
			}
		}
		return none
	}
}

// Hosts is a hedge's iterator: next's hosts that none of x's requests was given yet,
// then the up hosts they were given (the same coordinator again, on a single node),
// the first execution's last, at most extra+1 of those. Under a LOCAL_* consistency
// (x.SameDC) it skips every host of a data centre other than the first execution's
// host's: a coordinator counts LOCAL_QUORUM in its own data centre, so a hedge sent
// there would be acknowledged by replicas the caller never asked for.
func Hosts[S comparable](next func() S, extra int, x *Exec[S]) func() S {
	var again []S
	var none S
	done, first := false, true
	i := 0
	ops := x.H.ops
	give := func(h S) S {
		if first {
			first = false
			x.Handed.Add(1)
		}
		return timed(h, x, ops)
	}
	return func() S {
		for !done {
			h := next()
			if h != none && !x.inDC(h) {
				continue
			}
			if h == none {
				done = true
				// The first execution's host last: it is the one found slow.
				if again = x.givenHosts(); len(again) > 1 {
					again = append(again[1:], again[0])
				}
				again = slices.DeleteFunc(again, func(h S) bool { return !x.inDC(h) })
				break
			}
			if !x.wasGiven(h) {
				return give(h)
			}
		}
		for tries := 0; extra >= 0 && tries < len(again); tries++ {
			h := again[i%len(again)]
			i++
			if ops.Up(h) {
				extra--
				return give(h)
			}
		}
		return none
	}
}

// timed records h as given to a request of x and wraps it to time that request; h
// itself when x is nil.
func timed[S comparable](h S, x *Exec[S], ops *Ops[S]) S {
	if x == nil {
		return h
	}
	x.give(h)
	w, tm := ops.Timed(h)
	tm.answer, tm.At = &x.answerNs, time.Now()
	return w
}

// Timing times one request of a hedged execution: the host given to it, wrapped by the
// adapter (Ops.Timed, which holds it by value), passes the driver's Mark on to it.
type Timing struct {
	answer *atomic.Int64
	At     time.Time
	failed atomic.Bool // marked with an error: a later answer on it is a retry, not timed
}

// Mark keeps, for the first request of the execution to succeed, its latency. The
// driver marks nil for an answer and also for a request it cancelled
// (context.Canceled): the one overtaken by the answer is marked after it, as the
// driver cancels the others only once it returned the answer.
//
// The driver retries on the same host (RetryType Retry) without asking the iterator
// for one: the same host is marked again, and its time since the hand-out would count
// the failure and the backoff. An answer after an error on it is therefore not timed.
func (t *Timing) Mark(err error) {
	switch {
	case err != nil:
		t.failed.Store(true)
	case !t.failed.Load():
		t.answer.CompareAndSwap(0, int64(time.Since(t.At))+1)
	}
}
