package retry

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocql/gocql"
)

// execState is one execution's record of its attempts: the per-execution retry policy
// (execPolicy) keeps it, and the executor reads it when the execution ends.
type execState struct {
	mu        sync.Mutex
	ctx       context.Context
	attempts  int // attempts that failed and were seen by the policy
	statement string
	verdict   Verdict
	lastWhy   string
}

// execPolicy is the gocql.RetryPolicy of one pinned execution. gocql calls Attempt and
// then GetRetryType with the error, on the goroutine that ran the attempt; unlike a
// policy shared by many queries, this one can wait for the error before deciding, so
// the decision (Policy.decide) sees the error class, the verdict and the attempt count
// together. It sets no query observer: the session's observers stay in place.
type execPolicy struct {
	p  *Policy
	st *execState
}

func (e execPolicy) Attempt(gocql.RetryableQuery) bool {
	e.st.mu.Lock()
	e.st.attempts++
	e.st.mu.Unlock()
	return true // decided in GetRetryType, which has the error
}

func (e execPolicy) GetRetryType(err error) gocql.RetryType {
	st := e.st
	st.mu.Lock()
	attempts, v := st.attempts, st.verdict
	st.mu.Unlock()
	retry, why := e.p.decide(st.ctx, err, v.Idempotent, true, attempts)
	ev := Event{Attempt: attempts, Err: err, Class: ClassifyError(err), Idempotent: v.Idempotent,
		Statement: st.statement, Retrying: retry, Why: why}
	if retry {
		ev.Delay = e.p.delay(attempts)
	}
	e.p.report(ev)
	if !retry {
		st.mu.Lock()
		st.lastWhy = why
		st.mu.Unlock()
		return gocql.Rethrow
	}
	if sleep(st.ctx, ev.Delay) != nil {
		return gocql.Rethrow
	}
	return e.p.retryType(err)
}

// Pinned is a query prepared by Pin: the query to execute, its verdict and timestamp.
type Pinned struct {
	Query     *gocql.Query
	Verdict   Verdict
	Timestamp int64 // 0 for reads: nothing to pin
	state     *execState
}

// PinnedBatch is a batch prepared by PinBatch.
type PinnedBatch struct {
	Batch     *gocql.Batch
	Verdict   Verdict
	Timestamp int64
	state     *execState
}

// Pin prepares one execution of q for safe retries and returns a copy of it that:
//   - carries a write timestamp drawn once from the policy's clock (WithTimestamp), so
//     every attempt, speculative execution and re-prepare sends the same one — gocql
//     otherwise stamps each attempt anew and a late retry can overwrite newer data;
//   - is marked idempotent exactly when the Policy judges this execution repeatable
//     (its text, its schema and its bound values: Repeatable);
//   - retries through a policy of its own that sees each error before deciding.
//
// Pin once per execution; execute the returned query once. ts, if non-zero, is the
// timestamp to pin instead of a fresh one (to re-apply a write with its original
// timestamp). Reads get no timestamp.
func (p *Policy) Pin(ctx context.Context, q *gocql.Query, ts int64) Pinned {
	return p.pin(ctx, q, p.cfg.schema, ts)
}

// Query is Pin for a statement given as text and values, built on s; without a schema
// of its own (WithSchema) the Policy judges it against s's schema metadata.
func (p *Policy) Query(ctx context.Context, s *gocql.Session, ts int64, stmt string, values ...any) Pinned {
	return p.pin(ctx, s.Query(stmt, values...), p.schemaFor(s), ts)
}

// schemaFor is the Policy's schema, else s's.
func (p *Policy) schemaFor(s *gocql.Session) Schema {
	if p.cfg.schema != nil || s == nil {
		return p.cfg.schema
	}
	return SessionSchema(s)
}

func (p *Policy) pin(ctx context.Context, q *gocql.Query, schema Schema, ts int64) Pinned {
	if ctx == nil {
		ctx = context.Background()
	}
	stmt := q.Statement()
	v := p.classify(schema, q.Keyspace(), stmt).forValues(q.Values())
	st := &execState{ctx: ctx, statement: stmt, verdict: v}
	out := q.WithContext(ctx)
	out.Idempotent(v.Idempotent).RetryPolicy(execPolicy{p: p, st: st})
	if v.Writes {
		if ts == 0 {
			ts = p.cfg.clock.Next()
		}
		out.WithTimestamp(ts)
	} else {
		ts = 0
	}
	return Pinned{Query: out, Verdict: v, Timestamp: ts, state: st}
}

// batchVerdict judges a batch: idempotent iff every entry is (with its values) and it is
// not a COUNTER batch.
func (p *Policy) batchVerdict(schema Schema, b *gocql.Batch) Verdict {
	v := Verdict{Idempotent: true, Kind: KindBatch}
	ks := b.Keyspace()
	for i := range b.Entries {
		ev := p.classify(schema, ks, b.Entries[i].Stmt).forValues(b.Entries[i].Args)
		v.Statements += ev.Statements
		v.Writes = v.Writes || ev.Writes
		v.Conditional = v.Conditional || ev.Conditional
		if !ev.Idempotent {
			v.Idempotent = false
			for _, r := range ev.Reasons {
				v.notIdempotent(fmt.Sprintf("statement %d: %s", i+1, r))
			}
		}
	}
	if b.Type == gocql.CounterBatch {
		v.notIdempotent("COUNTER batch")
	}
	return v
}

// PinBatch is Pin for a batch: one timestamp for the whole batch (statements with their
// own USING TIMESTAMP keep theirs), idempotent iff every statement is.
func (p *Policy) PinBatch(ctx context.Context, b *gocql.Batch, ts int64) PinnedBatch {
	return p.pinBatch(ctx, nil, b, ts)
}

// pinBatch is PinBatch judging the entries against s's schema metadata when the Policy
// has no schema of its own (s may be nil).
func (p *Policy) pinBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch, ts int64) PinnedBatch {
	if ctx == nil {
		ctx = context.Background()
	}
	v := p.batchVerdict(p.schemaFor(s), b)
	st := &execState{ctx: ctx, statement: fmt.Sprintf("BATCH(%d)", len(b.Entries)), verdict: v}
	out := b.WithContext(ctx)
	// The entries are shared with the caller's batch; copy before marking them. gocql
	// speculates a batch only when every entry is marked idempotent.
	out.Entries = append([]gocql.BatchEntry(nil), b.Entries...)
	for i := range out.Entries {
		out.Entries[i].Idempotent = v.Idempotent
	}
	out.RetryPolicy(execPolicy{p: p, st: st})
	if ts == 0 {
		ts = p.cfg.clock.Next()
	}
	out.WithTimestamp(ts)
	return PinnedBatch{Batch: out, Verdict: v, Timestamp: ts, state: st}
}

// Exec pins q (see Pin) and executes it. A write that failed in a way that may have
// applied it (timeouts, lost connections, the context ending while an attempt was in
// flight) returns an *OutcomeUnknownError carrying the statement, values and pinned
// timestamp; it is appended to the outbox when one is configured and the write is
// idempotent. A context already done sends nothing and returns its error.
func (p *Policy) Exec(ctx context.Context, q *gocql.Query) error {
	if q == nil {
		return errors.New("retry: nil query")
	}
	return p.execPinned(p.Pin(ctx, q, 0))
}

// Exec executes a pinned query once (with its retries), with Policy.Exec's error
// contract.
func (pq Pinned) Exec(p *Policy) error { return p.execPinned(pq) }

func (p *Policy) execPinned(pq Pinned) error {
	if err := pq.state.ctx.Err(); err != nil {
		return err // nothing sent
	}
	err := pq.Query.Exec()
	if err == nil {
		return nil
	}
	stmt := Statement{CQL: pq.state.statement, Values: pq.Query.Values()}
	return p.outcome(err, pq.Verdict, pq.Timestamp, pq.state, false, gocql.UnloggedBatch, []Statement{stmt})
}

// ExecBatch pins b (see PinBatch) and executes it, with Exec's error contract.
func (p *Policy) ExecBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch) error {
	return p.ExecBatchAt(ctx, s, b, 0)
}

// ExecBatchAt pins b to timestamp ts (see PinBatch; 0: a fresh one) and executes it,
// with Exec's error contract. Callers that reserve timestamps themselves (overwrite)
// use it.
func (p *Policy) ExecBatchAt(ctx context.Context, s *gocql.Session, b *gocql.Batch, ts int64) error {
	if s == nil || b == nil {
		return errors.New("retry: nil session or batch")
	}
	return p.execPinnedBatch(s, p.pinBatch(ctx, s, b, ts))
}

func (p *Policy) execPinnedBatch(s *gocql.Session, pb PinnedBatch) error {
	if err := pb.state.ctx.Err(); err != nil {
		return err // nothing sent
	}
	err := s.ExecuteBatch(pb.Batch)
	if err == nil {
		return nil
	}
	stmts := make([]Statement, len(pb.Batch.Entries))
	for i, e := range pb.Batch.Entries {
		stmts[i] = Statement{CQL: e.Stmt, Values: e.Args}
	}
	return p.outcome(err, pb.Verdict, pb.Timestamp, pb.state, true, pb.Batch.Type, stmts)
}

// outcome turns the final error of an execution into what the caller gets: an
// *OutcomeUnknownError when a write may have applied, else err unchanged.
func (p *Policy) outcome(err error, v Verdict, ts int64, st *execState, batch bool, bt gocql.BatchType, stmts []Statement) error {
	if batchLogged(err) {
		return fmt.Errorf("%w (timestamp %d): %w", ErrBatchLogged, ts, err)
	}
	class := ClassifyError(err)
	// A context that ended mid-attempt: gocql returns ctx.Err() whether or not the
	// request had been written (execPinned checked the context before sending).
	inFlight := class == ClassCanceled
	if !v.Writes || !(class.MayHaveApplied() || inFlight) || nothingApplied(err) {
		return err
	}
	st.mu.Lock()
	attempts := st.attempts
	st.mu.Unlock()
	if inFlight || attempts == 0 {
		attempts++ // gocql does not consult the policy after a context error
	}
	ou := &OutcomeUnknownError{Statements: stmts, Batch: batch, BatchType: bt, Timestamp: ts,
		Idempotent: v.Idempotent, Reasons: v.Reasons, Attempts: attempts, Err: err}
	if p.cfg.outbox != nil && v.Idempotent {
		if oerr := p.cfg.outbox.Append(ou); oerr != nil {
			return fmt.Errorf("%w (and the outbox append failed: %v)", ou, oerr)
		}
	}
	return ou
}
