package engine

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// Engine is the driver-free part of one retry Policy. An adapter's Policy holds one,
// made by New with its settings and the mapping of its driver's errors.
type Engine struct {
	cfg     *Config
	facts   func(error) decision.Facts
	verdict sync.Map // cacheKey → cachedVerdict (bounded by verdictCacheMax)
	cached  int64
	mu      sync.Mutex
	offset  atomic.Pointer[ClockOffset] // the last measurement
}

const verdictCacheMax = 10_000

// New returns an Engine reading cfg (which the adapter keeps and never changes
// afterwards) and classifying errors with facts.
func New(cfg *Config, facts func(error) decision.Facts) *Engine {
	return &Engine{cfg: cfg, facts: facts}
}

// Config is the settings the Engine was made with.
func (e *Engine) Config() *Config { return e.cfg }

// Facts is what the adapter's mapping says of err.
func (e *Engine) Facts(err error) decision.Facts { return e.facts(err) }

// Delay is the wait before retry number failed (1 after the first failure): the backoff
// doubling from BaseDelay to at most MaxDelay, with full jitter unless turned off.
func (e *Engine) Delay(failed int) time.Duration {
	d := e.cfg.BaseDelay
	for i := 1; i < failed && d < e.cfg.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, e.cfg.MaxDelay)
	if e.cfg.Jitter && d > 0 {
		d = time.Duration(rand.Int64N(int64(d) + 1))
	}
	return d
}

// Report hands ev to the observer and the logger.
func (e *Engine) Report(ev Event) {
	if e.cfg.Observer != nil {
		e.cfg.Observer(ev)
	}
	if l := e.cfg.Logger; l != nil {
		attrs := []any{slog.Int("attempt", ev.Attempt), slog.String("class", ev.Class.String()),
			slog.String("statement", ev.Statement), slog.Bool("idempotent", ev.Idempotent)}
		if ev.Err != nil {
			attrs = append(attrs, slog.String("error", ev.Err.Error()))
		}
		if ev.Retrying {
			l.Warn("cqlsafe: retrying", append(attrs, slog.Duration("delay", ev.Delay))...)
		} else {
			l.Warn("cqlsafe: not retrying", append(attrs, slog.String("why", ev.Why))...)
		}
	}
}

// Decide is the decision after a failed attempt (decision.Decide with the Policy's bound
// on attempts).
func (e *Engine) Decide(ctx context.Context, err error, v verdict.Verdict, pinned bool, attempts int) (bool, decision.Reason) {
	if err == nil {
		return false, decision.ReasonNoError
	}
	return decision.Decide(ctx != nil && ctx.Err() != nil, e.facts(err), v, pinned, attempts, e.cfg.MaxAttempts)
}

// Why is r in a sentence, for err.
func (e *Engine) Why(r decision.Reason, err error) string {
	return decision.Why(r, e.facts(err).Class)
}

// NextHost says a retry after err goes to the next host.
func (e *Engine) NextHost(err error) bool { return decision.NextHost(e.facts(err), e.cfg.NextHost) }

// RetryableClass says a Policy set on a cluster may retry after err at all.
func (e *Engine) RetryableClass(err error) bool {
	f := e.facts(err)
	return f.Class.Retryable() && !f.BatchLogged
}

// Unpinned decides for a statement the Policy did not pin (set on a cluster or a query
// by hand), before gocql sends it again: reads are retried, writes never — their
// timestamp is not pinned. It reports the decision and waits the backoff.
func (e *Engine) Unpinned(ctx context.Context, attempts int, stmt string, v verdict.Verdict) bool {
	ev := Event{Attempt: attempts, Idempotent: v.Idempotent && !v.Writes, Statement: stmt}
	switch {
	case v.Writes:
		ev.Reason = decision.ReasonNotPinned
	case !v.Idempotent:
		ev.Reason = decision.ReasonNotIdempotent
	case attempts >= e.cfg.MaxAttempts:
		ev.Reason = decision.ReasonAttemptsExhausted
	case ctx != nil && ctx.Err() != nil:
		ev.Reason = decision.ReasonContextDone
	default:
		ev.Retrying = true
		ev.Delay = e.Delay(attempts)
	}
	if !ev.Retrying {
		ev.Why = decision.Why(ev.Reason, decision.ClassNone)
	}
	e.Report(ev)
	if !ev.Retrying {
		return false
	}
	return wait.Sleep(ctx, ev.Delay) == nil
}

// CacheKey names a statement's cached verdict: its text, its keyspace and the schema it
// was judged with (SchemaOwn for the Policy's own, SchemaSession with the session's
// identity for a session's metadata).
type CacheKey struct {
	Schema   int
	Session  any // comparable: the driver's session pointer
	Keyspace string
	Stmt     string
}

// The schemas a verdict is judged with.
const (
	SchemaNone    = 0
	SchemaOwn     = 1
	SchemaSession = 2
)

type cachedVerdict struct {
	v    verdict.Verdict
	gens []any // schema generation of each keyspace v consulted
}

// Classify returns the verdict for a statement text, cached under key. A verdict judged
// against a schema that reports generations (verdict.Versioned) is judged again when a
// keyspace it consulted changed.
func (e *Engine) Classify(key CacheKey, schema verdict.Schema) verdict.Verdict {
	gen, _ := schema.(verdict.Versioned)
	if c, ok := e.verdict.Load(key); ok {
		cv := c.(cachedVerdict)
		fresh := true
		for i, ks := range cv.v.Consulted() {
			if gen != nil && gen.Generation(ks) != cv.gens[i] {
				fresh = false
				break
			}
		}
		if fresh {
			return cv.v
		}
	}
	v := verdict.ClassifyIn(key.Keyspace, key.Stmt, schema)
	cv := cachedVerdict{v: v}
	if gen != nil {
		for _, ks := range v.Consulted() {
			cv.gens = append(cv.gens, gen.Generation(ks))
		}
	}
	e.mu.Lock()
	if e.cached < verdictCacheMax {
		if _, loaded := e.verdict.Swap(key, cv); !loaded {
			e.cached++
		}
	}
	e.mu.Unlock()
	return v
}

// SetOffset records a clock measurement and warns when it is beyond the bound.
func (e *Engine) SetOffset(ctx context.Context, o ClockOffset) {
	e.offset.Store(&o)
	if e.cfg.MaxOffset > 0 && o.Beyond(e.cfg.MaxOffset) && e.cfg.Logger != nil {
		e.cfg.Logger.WarnContext(ctx, "cqlsafe: clock skew beyond the bound: writes refused",
			"offset", o.Offset, "uncertainty", o.Uncertainty, "host", o.Host, "bound", e.cfg.MaxOffset)
	}
}

// Offset is the last measurement, if any.
func (e *Engine) Offset() (o ClockOffset, ok bool) {
	if m := e.offset.Load(); m != nil {
		return *m, true
	}
	return ClockOffset{}, false
}

// RefuseSkewed is a *ClockSkewError while the last measurement is beyond the bound.
func (e *Engine) RefuseSkewed() error {
	if e.cfg.MaxOffset <= 0 {
		return nil
	}
	if m := e.offset.Load(); m != nil && m.Beyond(e.cfg.MaxOffset) {
		return &ClockSkewError{Offset: *m, Bound: e.cfg.MaxOffset}
	}
	return nil
}

// clockSamples is how many round trips MeasureClock makes; the fastest decides.
const clockSamples = 5

// MeasureClock measures the Policy's clock against a node's: sample reads the node's
// time in milliseconds (toUnixTimestamp(now()) from system.local) and the node's address,
// between two readings of the Policy's clock; the sample with the shortest round trip
// is kept (Offset) and decides, with a bound (WithMaxClockOffset), whether writes are
// refused.
func (e *Engine) MeasureClock(ctx context.Context, sample func() (ms int64, host string, err error)) (ClockOffset, error) {
	best := ClockOffset{Uncertainty: time.Duration(1<<63 - 1)}
	for range clockSamples {
		t0 := e.cfg.Clock.Now()
		ms, host, err := sample()
		t1 := e.cfg.Clock.Now()
		if err != nil {
			return ClockOffset{}, err
		}
		// The node read its clock somewhere in [t0, t1]: the midpoint is off by at most
		// half the round trip, and its millisecond reading by up to 1 ms more.
		mid := (t0 + t1) / 2
		o := ClockOffset{Host: host, Offset: time.Duration(ms*1000+500-mid) * time.Microsecond,
			Uncertainty: time.Duration((t1-t0)/2+500) * time.Microsecond}
		if o.Uncertainty < best.Uncertainty {
			best = o
		}
	}
	best.At = time.Now()
	e.SetOffset(ctx, best)
	return best, nil
}
