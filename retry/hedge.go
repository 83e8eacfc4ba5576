package retry

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
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
