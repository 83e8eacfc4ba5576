package retry

import (
	"log/slog"
	"time"

	"github.com/cqlsafe/cqlsafe/clientid"
)

// Option configures a Policy (and Do, which builds one).
type Option func(*config)

type config struct {
	maxAttempts int
	baseDelay   time.Duration
	maxDelay    time.Duration
	jitter      bool
	clock       *clientid.Clock
	observer    func(Event)
	logger      *slog.Logger
	schema      Schema
	outbox      *Outbox
	policy      *Policy
	nextHost    bool
}

// defaults are documented on NewPolicy.
func defaults() config {
	return config{
		maxAttempts: 4,
		baseDelay:   50 * time.Millisecond,
		maxDelay:    2 * time.Second,
		jitter:      true,
		clock:       clientid.ProcessClock(),
	}
}

// WithMaxAttempts bounds the attempts per execution, the first included (values below 1
// mean 1: no retry).
func WithMaxAttempts(n int) Option {
	return func(c *config) { c.maxAttempts = max(1, n) }
}

// WithBackoff sets the exponential backoff: the delay before retry k (k = 1, 2, …) is
// base·2^(k−1), capped at max, then (with jitter) drawn uniformly from [0, that].
// Non-positive values keep the defaults.
func WithBackoff(base, max time.Duration) Option {
	return func(c *config) {
		if base > 0 {
			c.baseDelay = base
		}
		if max > 0 {
			c.maxDelay = max
		}
		if c.maxDelay < c.baseDelay {
			c.maxDelay = c.baseDelay
		}
	}
}

// WithoutJitter makes delays exactly base·2^(k−1) (capped): for tests.
func WithoutJitter() Option { return func(c *config) { c.jitter = false } }

// WithClock sets the clock write timestamps are drawn from (default
// clientid.ProcessClock()).
func WithClock(clock *clientid.Clock) Option {
	return func(c *config) {
		if clock != nil {
			c.clock = clock
		}
	}
}

// WithObserver calls f for every failed attempt: retried or not. f must be fast and
// safe for concurrent use.
func WithObserver(f func(Event)) Option { return func(c *config) { c.observer = f } }

// WithLogger logs every retry and every give-up at Warn level on l: attempt, error
// class, delay and statement text. Bound values are never logged.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithSchema refines idempotence verdicts with column metadata (see ClassifyWithSchema).
func WithSchema(s Schema) Option { return func(c *config) { c.schema = s } }

// WithOutbox appends writes whose outcome stayed unknown (idempotent ones only) to o, so
// they can be replayed later with their original timestamps.
func WithOutbox(o *Outbox) Option { return func(c *config) { c.outbox = o } }

// WithPolicy makes Do and Exec use p's settings; options after it still apply.
func WithPolicy(p *Policy) Option {
	return func(c *config) {
		if p != nil {
			*c = p.cfg
		}
	}
}

// WithTimeoutsOnNextHost retries client-side timeouts and lost connections on the next
// host instead of the same one: for multi-node clusters, where the coordinator itself
// may be the problem (paused, overloaded). On a single node there is no next host and
// such errors are then not retried.
func WithTimeoutsOnNextHost() Option { return func(c *config) { c.nextHost = true } }

// ServicePreset is a preset for request-serving services, where a caller is waiting:
// 3 attempts, backoff 20 ms doubling to at most 250 ms, with jitter. Worst case it adds
// about 270 ms of waiting to a request before giving up.
func ServicePreset() Option {
	return func(c *config) {
		c.maxAttempts = 3
		c.baseDelay = 20 * time.Millisecond
		c.maxDelay = 250 * time.Millisecond
		c.jitter = true
	}
}

// Event describes one failed attempt, for WithObserver.
type Event struct {
	Attempt    int // the attempt that failed, 1 for the first
	Class      ErrorClass
	Err        error
	Retrying   bool          // false: the error is returned to the caller
	Delay      time.Duration // wait before the next attempt, when Retrying
	Idempotent bool
	Statement  string // statement text only, never values; "BATCH(n)" for batches
	Why        string // when not retrying: why not
}
