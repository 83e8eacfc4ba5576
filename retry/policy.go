package retry

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// Policy decides whether a failed Cassandra statement is sent again, and runs
// statements so that doing so is safe.
//
// Run writes through Exec and ExecBatch: they pin one write timestamp before the first
// attempt, judge the statement with its bound values (Classify, refined by the schema
// given with WithSchema) and retry it through a per-execution policy that sees every
// error. The rules, in order:
//
//	context done, attempts exhausted, fatal error classes   never retried
//	nothing applied (Unavailable, Overloaded, Bootstrapping,
//	  no connection)                                         retried, even if not idempotent
//	                                                         (Overloaded, Bootstrapping and no
//	                                                         connection on the next host)
//	logged batch in the batch log (write timeout BATCH)     never re-sent: ErrBatchLogged
//	may have applied (write timeout or failure of any other
//	  type — BATCH_LOG too: a batchlog replica may replay
//	  it —, client timeout, connection lost mid-request)     retried only if idempotent
//	read timeout                                             retried
//
// A write that may have applied and was not retried (or ran out of attempts) returns an
// *OutcomeUnknownError; so does a write whose context ended while an attempt was in
// flight (gocql cannot tell whether the request had been written).
//
// Set as a cluster's RetryPolicy (cluster.RetryPolicy = p), a Policy sees statements it
// did not pin: it retries reads, and never retries a write (gocql would re-send it with
// a fresh timestamp, which can overwrite a newer write by another client).
//
// Waits between attempts back off exponentially with jitter and end early when the
// context is done. A Policy is safe for concurrent use.
type Policy struct {
	cfg     config
	err     error    // the first invalid option: nothing is sent
	verdict sync.Map // verdictKey → cachedVerdict (bounded by verdictCacheMax)
	cached  int64
	mu      sync.Mutex
	offset  atomic.Pointer[ClockOffset] // the last MeasureClock
}

const verdictCacheMax = 10_000

var _ gocql.RetryPolicy = (*Policy)(nil)

// NewPolicy returns a Policy. Defaults:
//
//   - 4 attempts per execution, the first included (WithMaxAttempts);
//   - backoff 50 ms doubling to at most 2 s, full jitter (WithBackoff, WithoutJitter);
//   - write timestamps from clientid.ProcessClock() (WithClock);
//   - no observer, no logging (WithObserver, WithLogger);
//   - no schema metadata (WithSchema): ExecBatch reads it from the session it is given;
//     Exec judges values bound to columns of unknown type by their shape (a non-empty
//     slice may be a non-frozen list, so it is not retried);
//   - no outbox (WithOutbox);
//   - no bound on the clock's offset from the cluster's (WithMaxClockOffset).
//
// Invalid option values are rejected, not clamped: see Err.
//
// ServicePreset() tunes it for request-serving code.
func NewPolicy(opts ...Option) *Policy {
	c := defaults()
	var err error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err = o(&c); err != nil {
			break
		}
	}
	return &Policy{cfg: c, err: err}
}

// Err returns the error of the first invalid option NewPolicy was given, or nil. A
// Policy with an invalid option sends nothing: Exec, ExecBatch and Do return this error.
func (p *Policy) Err() error { return p.err }

// Schema returns the schema given with WithSchema, or nil.
func (p *Policy) Schema() Schema { return p.cfg.schema }

// Clock returns the clock the Policy draws write timestamps from (WithClock).
func (p *Policy) Clock() *clientid.Clock { return p.cfg.clock }

// MaxAttempts returns the bound on attempts per execution.
func (p *Policy) MaxAttempts() int { return p.cfg.maxAttempts }

// Repeatable is the Policy's judgement of one execution: whether executing cql with
// these bound values twice, with the same pinned timestamp, leaves Cassandra as once.
// With values nil it judges the text alone (a linter's view): Verdict.ValueConditions
// then says which bound values would make it not repeatable.
// keyspace is where statements that name no keyspace run (the session's). The Policy's
// schema (WithSchema) refines it.
func (p *Policy) Repeatable(keyspace, cql string, values []any) Verdict {
	return p.RepeatableAt(keyspace, cql, values, 0)
}

// RepeatableAt is Repeatable for an execution pinned at timestamp ts (µs since the
// epoch; 0: not known), as Exec judges it: in a batch, a statement with its own USING
// TIMESTAMP is compared with ts (Verdict.AtTimestamp).
func (p *Policy) RepeatableAt(keyspace, cql string, values []any, ts int64) Verdict {
	if p.err != nil {
		return Verdict{Reasons: []string{"invalid policy: " + p.err.Error()}, Kind: KindUnknown, Writes: true}
	}
	v := p.classify(p.cfg.schema, keyspace, cql)
	if ts != 0 {
		v = v.AtTimestamp(ts)
	}
	if values == nil {
		return v // the text alone: what depends on values is in v.ValueConditions()
	}
	return v.ForValues(values, gocqlValues{})
}

// Attempt implements gocql.RetryPolicy for statements the Policy did not pin (the Policy
// set on a cluster or a query by hand): reads are retried, writes never — their
// timestamp is not pinned. gocql calls Attempt without the error; GetRetryType then
// rethrows errors of classes that are not retryable.
func (p *Policy) Attempt(q gocql.RetryableQuery) bool {
	if p.err != nil {
		return false
	}
	ctx := q.Context()
	attempts := q.Attempts()
	stmt, v := p.unpinnedVerdict(q)
	ev := Event{Attempt: attempts, Idempotent: v.Idempotent && !v.Writes, Statement: stmt}
	switch {
	case v.Writes:
		ev.Reason = ReasonNotPinned
	case !v.Idempotent:
		ev.Reason = ReasonNotIdempotent
	case attempts >= p.cfg.maxAttempts:
		ev.Reason = ReasonAttemptsExhausted
	case ctx != nil && ctx.Err() != nil:
		ev.Reason = ReasonContextDone
	default:
		ev.Retrying = true
		ev.Delay = p.delay(attempts)
	}
	if !ev.Retrying {
		ev.Why = why(ev.Reason, nil)
	}
	p.report(ev)
	if !ev.Retrying {
		return false
	}
	return sleep(ctx, ev.Delay) == nil
}

// unpinnedVerdict classifies a statement gocql hands to Attempt.
func (p *Policy) unpinnedVerdict(q gocql.RetryableQuery) (string, Verdict) {
	switch x := q.(type) {
	case *gocql.Query:
		stmt := x.Statement()
		return stmt, p.classify(p.cfg.schema, x.Keyspace(), stmt).ForValues(x.Values(), gocqlValues{})
	case *gocql.Batch:
		v := p.batchVerdict(p.cfg.schema, x, 0) // its timestamp is not pinned
		return "BATCH", v
	}
	return "", Verdict{Kind: KindUnknown, Writes: true, Reasons: []string{"unknown statement type"}}
}

// GetRetryType implements gocql.RetryPolicy: where to retry, by error class; errors of
// classes that are never retried are rethrown.
func (p *Policy) GetRetryType(err error) gocql.RetryType {
	if f := facts(err); !f.Class.Retryable() || f.BatchLogged {
		return gocql.Rethrow
	}
	return p.retryType(err)
}

// delay is the wait before retry number `failed` (1 after the first failure).
func (p *Policy) delay(failed int) time.Duration {
	d := p.cfg.baseDelay
	for i := 1; i < failed && d < p.cfg.maxDelay; i++ {
		d *= 2
	}
	d = min(d, p.cfg.maxDelay)
	if p.cfg.jitter && d > 0 {
		d = time.Duration(rand.Int64N(int64(d) + 1))
	}
	return d
}

func (p *Policy) report(ev Event) {
	if p.cfg.observer != nil {
		p.cfg.observer(ev)
	}
	if l := p.cfg.logger; l != nil {
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

func sleep(ctx context.Context, d time.Duration) error { return wait.Sleep(ctx, d) }

type verdictKey struct {
	schema   int // 0 none, 1 the Policy's, 2 a session's
	session  *gocql.Session
	keyspace string
	stmt     string
}

type cachedVerdict struct {
	v    Verdict
	gens []any // schema generation of each keyspace v consulted
}

// classify returns the verdict for a statement text, cached. A verdict judged against
// a session's schema is judged again when that keyspace's metadata changed.
func (p *Policy) classify(schema Schema, keyspace, stmt string) Verdict {
	key := verdictKey{keyspace: keyspace, stmt: stmt}
	switch s := schema.(type) {
	case nil:
	case sessionSchema:
		key.schema, key.session = 2, s.s
	default:
		key.schema = 1 // the Policy's own (WithSchema): the only other kind passed here
	}
	gen, _ := schema.(verdict.Versioned)
	if c, ok := p.verdict.Load(key); ok {
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
	v := verdict.ClassifyIn(keyspace, stmt, schema)
	cv := cachedVerdict{v: v}
	if gen != nil {
		for _, ks := range v.Consulted() {
			cv.gens = append(cv.gens, gen.Generation(ks))
		}
	}
	p.mu.Lock()
	if p.cached < verdictCacheMax {
		if _, loaded := p.verdict.Swap(key, cv); !loaded {
			p.cached++
		}
	}
	p.mu.Unlock()
	return v
}
