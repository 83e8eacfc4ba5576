// Package hedge is hedging as both drivers' retry packages do it (retry.WithHedging):
// the hedge delay drawn from recent request latencies, the budget of hedges that lose,
// one execution's race between its first execution and its hedges, and the host
// iterators that send a hedge to another coordinator. It knows no driver: a driver's
// selected host is the type parameter S, and Ops says how to read and wrap one.
//
// Hedging sends a second copy of a slow write before the first has answered: a lost
// response or a stalled coordinator then costs the hedge delay, not a client timeout.
// It is safe only for what may run twice — a repeatable statement with a pinned
// timestamp, where two executions leave Cassandra as one does — so a Policy hedges
// those and nothing else (counters, list appends, LWTs and unpinned statements are
// sent once).
//
// The Policy hedges itself rather than through the driver's speculative executions
// (Exec.Run): the first execution runs on the caller's goroutine on the driver's plain
// path, and a timer sends a hedge — the same pinned statement, as a driver execution of
// its own — only when one is due. gocql v1.7.0's speculative path costs every
// execution a goroutine, a ticker and a hand-off of the result, which on a busy
// three-node cluster measured 0.86× against 1.06× without it, no hedge sent (FAULTS.md);
// it also lets a speculative execution that finds no host (ErrNoConnections) win the
// race against a first execution still in flight (the v2 driver's speculative path is
// the same). Here the first answer wins only when it is a success; when the first
// execution fails, hedges in flight are waited for.
//
// A hedge must go to another coordinator: the adapters' HedgingHosts, installed as the
// session's HostSelectionPolicy, gives a hedge first the hosts none of the execution's
// requests was given, then (a single node, every other host down) those again —
// harmless for a repeatable pinned write, and what rescues a lost response on a single
// node (Pick). It also marks a first execution as picked through it: on a session
// without HedgingHosts, WithHedging sends every statement once.
package hedge

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Option configures hedging (the adapters' HedgeOption).
type Option func(*Config) error

// Config is hedging's configuration (documented on the adapters' Hedge… options).
type Config struct {
	Percentile float64
	Floor      time.Duration
	Ceiling    time.Duration
	InFlight   int
	Budget     float64 // lost hedges per execution offered for hedging
}

// Window is how many recent executions the delay is computed from, and Every how
// often (in executions) it is recomputed.
const (
	Window   = 256
	Every    = 32
	MinCount = 32 // executions seen before the delay leaves the ceiling
	// Token is one hedge of the budget (HedgeBudget), in millionths; Burst is how many
	// lost hedges the budget holds when full.
	Token = 1_000_000
	Burst = 50 * Token
)

// Defaults are documented on the adapters' WithHedging.
func Defaults() Config {
	return Config{Percentile: 0.99, Floor: 2 * time.Millisecond, Ceiling: 250 * time.Millisecond, InFlight: 3, Budget: 0.05}
}

// Percentile is HedgePercentile: 0 < q < 1.
func Percentile(q float64) Option {
	return func(c *Config) error {
		if !(q > 0 && q < 1) {
			return fmt.Errorf("retry: hedge percentile %v outside (0, 1)", q)
		}
		c.Percentile = q
		return nil
	}
}

// DelayBounds is HedgeDelayBounds: 0 < floor ≤ ceiling.
func DelayBounds(floor, ceiling time.Duration) Option {
	return func(c *Config) error {
		if floor <= 0 || ceiling < floor {
			return fmt.Errorf("retry: hedge delay bounds %v, %v: want 0 < floor ≤ ceiling", floor, ceiling)
		}
		c.Floor, c.Ceiling = floor, ceiling
		return nil
	}
}

// MaxInFlight is HedgeMaxInFlight: n ≥ 2.
func MaxInFlight(n int) Option {
	return func(c *Config) error {
		if n < 2 {
			return fmt.Errorf("retry: hedge max in flight %d below 2", n)
		}
		c.InFlight = n
		return nil
	}
}

// Budget is HedgeBudget: 0 < ratio ≤ 1.
func Budget(ratio float64) Option {
	return func(c *Config) error {
		if !(ratio > 0 && ratio <= 1) {
			return fmt.Errorf("retry: hedge budget %v outside (0, 1]", ratio)
		}
		c.Budget = ratio
		return nil
	}
}

// New applies opts over the defaults; ops reads and wraps the driver's selected hosts.
func New[S comparable](opts []Option, ops *Ops[S]) (*Hedger[S], error) {
	c := Defaults()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	h := &Hedger[S]{Cfg: c, Refill: max(int64(math.Round(c.Budget*Token)), 1), ops: ops}
	h.DelayNs.Store(int64(c.Ceiling))
	h.Tokens.Store(Burst)
	return h, nil
}

// Hedger keeps a Policy's recent request latencies and the hedge delay drawn from
// them. The delay is read on every execution (an atomic load); samples go into a ring
// under a mutex, and every Every samples the percentile is recomputed.
//
// A sample is the latency of the request that answered a hedged statement — the first
// execution's or a hedge's, each timed by HedgingHosts from when it was given its host
// to the driver marking that host with its result. Nothing else is a sample: not the
// statement's end-to-end time, which says how long the hedge delay was rather than how
// long requests take (fed back, it dragged the delay down in a burst of slow requests
// until most were hedged); not a request that answered after failing on the same host
// (the driver retries it without asking for a host again, so its time would include
// the failure, a client timeout perhaps, and the backoff); not a statement that is
// never hedged (an LWT, a counter, a read: a different latency, and at the 99th
// percentile three of them in the window would set the delay). Lost responses leave no
// sample. The one bias left: when a hedge overtakes a slow request, the hedge's latency
// is kept and the slow one never known, so the delay sits somewhat below the requests'
// true percentile — a review's simulation of the path gave 1.6–4.4% hedged at the 99th
// percentile, depending on how heavy the tail is.
type Hedger[S comparable] struct {
	Cfg     Config
	DelayNs atomic.Int64
	// Tokens is the budget of lost hedges (HedgeBudget), in millionths of a hedge: at
	// most Burst; a hedge takes one when sent and gives it back when it wins; each
	// execution offered for hedging adds Refill at its end; last resorts may take it
	// down to −Burst, a late charge (HedgeStreams) to −2×Burst.
	Tokens atomic.Int64
	Refill int64
	ops    *Ops[S]

	mu      sync.Mutex
	ring    [Window]int64 // ns
	n       int           // samples written, total
	scratch [Window]int64
}

// Samples is the window of recent samples, oldest first when it has not wrapped (for
// tests and measurements).
func (h *Hedger[S]) Samples() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]time.Duration, 0, min(h.n, Window))
	for i := 0; i < min(h.n, Window); i++ {
		out = append(out, time.Duration(h.ring[i]))
	}
	return out
}
