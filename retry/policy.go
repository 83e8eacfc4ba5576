package retry

import (
	"errors"
	"weak"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
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
// The driver answers "no connection" (every connection to every host in its plan is
// gone, e.g. while a node restarts) without asking any retry policy; Exec runs the
// statement again after the backoff, within the same attempt limit.
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
	cfg config
	err error          // the first invalid option: nothing is sent
	eng *engine.Engine // the rules, driver-free: decisions, verdict cache, clock offset
}

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
	p := &Policy{cfg: c, err: err}
	p.eng = engine.New(&p.cfg.Config, facts)
	return p
}

// zeroEngine is the engine of a Policy not made by NewPolicy (a zero Policy): no
// attempts beyond the first, no observer; it judges statements as any Policy does.
var zeroEngine = engine.New(&engine.Config{}, facts)

// e is the Policy's engine (zeroEngine for a zero Policy).
func (p *Policy) e() *engine.Engine {
	if p.eng == nil {
		return zeroEngine
	}
	return p.eng
}

// usable is the error Exec and ExecBatch return before sending anything: an invalid
// option, or a Policy not made by NewPolicy.
func (p *Policy) usable() error {
	if p == nil {
		return errors.New("retry: nil Policy")
	}
	if p.err != nil {
		return p.err
	}
	if p.eng == nil {
		return errors.New("retry: a Policy must be made by NewPolicy")
	}
	return nil
}

// Err returns the error of the first invalid option NewPolicy was given, or nil. A
// Policy with an invalid option sends nothing: Exec, ExecBatch and Do return this error.
func (p *Policy) Err() error { return p.err }

// Schema returns the schema given with WithSchema, or nil.
func (p *Policy) Schema() Schema { return p.cfg.Schema }

// Clock returns the clock the Policy draws write timestamps from (WithClock).
func (p *Policy) Clock() *clientid.Clock { return p.cfg.Clock }

// MaxAttempts returns the bound on attempts per execution.
func (p *Policy) MaxAttempts() int { return p.cfg.MaxAttempts }

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
	v := p.classify(p.cfg.Schema, keyspace, cql)
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
	stmt, v := p.unpinnedVerdict(q)
	return p.e().Unpinned(q.Context(), q.Attempts(), stmt, v)
}

// unpinnedVerdict classifies a statement gocql hands to Attempt.
func (p *Policy) unpinnedVerdict(q gocql.RetryableQuery) (string, Verdict) {
	switch x := q.(type) {
	case *gocql.Query:
		stmt := x.Statement()
		return stmt, p.classify(p.cfg.Schema, x.Keyspace(), stmt).ForValues(x.Values(), gocqlValues{})
	case *gocql.Batch:
		v := p.batchVerdict(p.cfg.Schema, x, 0) // its timestamp is not pinned
		return "BATCH", v
	}
	return "", Verdict{Kind: KindUnknown, Writes: true, Reasons: []string{"unknown statement type"}}
}

// GetRetryType implements gocql.RetryPolicy: where to retry, by error class; errors of
// classes that are never retried are rethrown.
func (p *Policy) GetRetryType(err error) gocql.RetryType {
	if !p.e().RetryableClass(err) {
		return gocql.Rethrow
	}
	return p.retryType(err)
}

// classify returns the verdict for a statement text, cached. A verdict judged against
// a session's schema is judged again when that keyspace's metadata changed.
func (p *Policy) classify(schema Schema, keyspace, stmt string) Verdict {
	key := engine.CacheKey{Keyspace: keyspace, Stmt: stmt}
	switch s := schema.(type) {
	case nil:
	case sessionSchema:
		key.Schema, key.Session = engine.SchemaSession, weak.Make(s.s) // the cache does not keep a session alive
	default:
		key.Schema = engine.SchemaOwn // the Policy's own (WithSchema): the only other kind passed here
	}
	return p.e().Classify(key, schema)
}
