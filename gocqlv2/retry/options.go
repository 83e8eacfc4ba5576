package retry

import (
	"errors"
	"log/slog"
	"time"

	"github.com/cqlsafe/cqlsafe/gocqlv2/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// Option configures a Policy (and Do, which builds one). An invalid value is rejected,
// never clamped: the Policy then sends nothing and every Exec, ExecBatch and Do returns
// the option's error (Policy.Err reports it up front).
type Option func(*config) error

// config is the engine's settings and what names gocql's types or this package's.
type config struct {
	engine.Config
	outbox Recorder
	hedge  *hedger // nil: no hedging
	// hedgeHere: hedge was made by a WithHedging in this option list, not inherited
	// through WithPolicy (Do refuses it: a budget per call bounds nothing).
	hedgeHere bool
}

// defaults are documented on NewPolicy.
func defaults() config { return config{Config: engine.Defaults()} }

// set adapts one of the engine's options.
func set(o engine.Option) Option { return func(c *config) error { return o(&c.Config) } }

// Recorder keeps writes whose outcome stayed unknown, to be re-applied later with their
// original timestamps (package github.com/cqlsafe/cqlsafe/gocqlv2/outbox has a
// file-backed one). The Policy hands it only
// repeatable writes.
type Recorder interface {
	Append(*OutcomeUnknownError) error
}

// WithMaxAttempts bounds the attempts per execution, the first included; n ≥ 1 (1: no
// retry).
func WithMaxAttempts(n int) Option { return set(engine.WithMaxAttempts(n)) }

// WithBackoff sets the exponential backoff: the delay before retry k (k = 1, 2, …) is
// base·2^(k−1), capped at max, then (with jitter) drawn uniformly from [0, that].
// 0 < base ≤ max.
func WithBackoff(base, max time.Duration) Option { return set(engine.WithBackoff(base, max)) }

// WithoutJitter makes delays exactly base·2^(k−1) (capped): for tests.
func WithoutJitter() Option { return set(engine.WithoutJitter()) }

// WithClock sets the clock write timestamps are drawn from (default
// clientid.ProcessClock(): one clock per process, whichever drivers it links).
// Packages built on retry draw theirs from the same clock: Policy.Clock.
func WithClock(clock *clientid.Clock) Option { return set(engine.WithClock(clock)) }

// WithObserver calls f for every failed attempt: retried or not. f must be fast and
// safe for concurrent use. nil removes it.
func WithObserver(f func(Event)) Option { return set(engine.WithObserver(f)) }

// WithLogger logs every retry and every give-up at Warn level on l: attempt, error
// class, delay and statement text. Bound values are never logged. nil removes it.
func WithLogger(l *slog.Logger) Option { return set(engine.WithLogger(l)) }

// WithSchema refines idempotence verdicts with column metadata: SessionSchema reads it
// from a session, schema.ParseColumns from a .cql file. nil removes it.
func WithSchema(s Schema) Option { return set(engine.WithSchema(s)) }

// WithOutbox appends writes whose outcome stayed unknown (repeatable ones only) to r, so
// they can be replayed later with their original timestamps (see package outbox). nil
// removes it.
func WithOutbox(r Recorder) Option {
	return func(c *config) error {
		c.outbox = r
		if isNilRecorder(r) {
			c.outbox = nil
		}
		return nil
	}
}

// WithPolicy starts from p's settings; options after it still apply.
func WithPolicy(p *Policy) Option {
	return func(c *config) error {
		if p == nil {
			return errors.New("retry: nil policy")
		}
		if p.err != nil {
			return p.err
		}
		*c = p.cfg
		c.hedgeHere = false
		return nil
	}
}

// WithTimeoutsOnNextHost retries client-side timeouts and lost connections on the next
// host instead of the same one: for multi-node clusters, where the coordinator itself
// may be the problem (paused, overloaded). On a single node there is no next host and
// such errors are then not retried.
func WithTimeoutsOnNextHost() Option { return set(engine.WithTimeoutsOnNextHost()) }

// WithHedging hedges what is safe to repeat: a write the Policy judges repeatable, with
// its pinned timestamp, is hedged — a second copy sent to another host when the first
// has not answered after a delay drawn from this Policy's recent hedged requests that
// answered. Counters, list appends, LWTs and anything else not repeatable are never
// hedged. Under LOCAL_ONE, LOCAL_QUORUM or LOCAL_SERIAL a hedge — and a hedged
// execution's own retry on the next host — goes only to hosts of the first request's
// data centre (a coordinator counts LOCAL_QUORUM among its own
// data centre's replicas: one elsewhere would acknowledge what the caller's data
// centre does not hold); with none other there, the same host again. Defaults (see the Hedge… options): delay at the 99th percentile of the last
// 256 executions, within [2 ms, 250 ms] (250 ms until 32 were seen); at most 3
// executions of a statement in flight (two hedges); hedges that lose (the first
// answered first) held to 5% of executions over time, plus 100 at most in bursts
// (HedgeBudget; hedges that win cost nothing). The session must pick hosts through
// HedgingHosts, else nothing is hedged (see there why); with HedgeStreams as its
// StreamObserver, a hedge that won only by overtaking a first request that answered
// after all costs the budget too.
func WithHedging(opts ...HedgeOption) Option {
	return func(c *config) error {
		h, err := newHedger(opts)
		if err != nil {
			return err
		}
		c.hedge, c.hedgeHere = h, true
		return nil
	}
}

// ServicePreset is a preset for request-serving services, where a caller is waiting:
// 3 attempts, backoff 20 ms doubling to at most 250 ms, with jitter. Worst case it adds
// about 270 ms of waiting to a request before giving up.
func ServicePreset() Option { return set(engine.ServicePreset()) }

// Event describes one failed attempt, for WithObserver.
type Event = engine.Event
