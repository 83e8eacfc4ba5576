package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// execState is one execution's record of its attempts: the per-execution retry policy
// (execPolicy) keeps it, and the executor reads it when the execution ends.
type execState struct {
	p         *Policy
	mu        sync.Mutex
	ctx       context.Context
	attempts  int // attempts that failed and were seen by the policy
	statement string
	verdict   Verdict
	lastWhy   string
	trace     Trace
	// mayHaveApplied: some attempt failed in a way that may have applied the write; the
	// outcome is then unknown whatever the last attempt's error says.
	mayHaveApplied bool
}

// execPolicy is the gocql.RetryPolicy of one pinned execution. gocql calls Attempt and
// then GetRetryType with the error, on the goroutine that ran the attempt; unlike a
// policy shared by many queries, this one can wait for the error before deciding, so
// the decision (Policy.decide) sees the error class, the verdict and the attempt count
// together. It sets no query observer: the session's observers stay in place.
//
// It holds one pointer, so that it converts to the interface without an allocation.
type execPolicy struct {
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
	if decision.AttemptMayHaveApplied(facts(err), v) {
		st.mu.Lock()
		st.mayHaveApplied = true
		st.mu.Unlock()
	}
	p := st.p
	retry, reason := p.decide(st.ctx, err, v, true, attempts)
	ev := Event{Attempt: attempts, Err: err, Class: ClassifyError(err), Idempotent: v.Idempotent,
		Statement: st.statement, Retrying: retry}
	if retry {
		ev.Delay = p.delay(attempts)
		ev.NextHost = p.retryType(err) == gocql.RetryNextHost
	} else {
		ev.Reason, ev.Why = reason, why(reason, err)
	}
	p.report(ev)
	st.trace.Attempt(ev)
	if !retry {
		st.mu.Lock()
		st.lastWhy = ev.Why
		st.mu.Unlock()
		return gocql.Rethrow
	}
	if sleep(st.ctx, ev.Delay) != nil {
		return gocql.Rethrow
	}
	return p.retryType(err)
}

// pinned is one execution of a query, prepared by pin: the query to execute, its
// verdict and timestamp.
type pinned struct {
	query     *gocql.Query
	values    []any // taken before executing: hedges share the query's values
	verdict   Verdict
	timestamp int64 // 0 for reads: nothing to pin
	state     *execState
	hedge     *hedgeExec // nil: not hedged
}

// pinnedBatch is one execution of a batch, prepared by pinBatch.
type pinnedBatch struct {
	batch     *gocql.Batch
	verdict   Verdict
	timestamp int64
	state     *execState
	hedge     *hedgeExec
}

// hedgeFailed notes how the hedges of a failed execution failed (none: none was sent,
// or the execution succeeded): when one may have applied the write, so may the
// execution have, whatever the first execution's error says. A hedge ended by the
// context is one gocql never shows the retry policy.
func (st *execState) hedgeFailed(errs []error) {
	for _, err := range errs {
		if decision.AttemptMayHaveApplied(facts(err), st.verdict) {
			st.mu.Lock()
			st.mayHaveApplied = true
			st.mu.Unlock()
			return
		}
	}
}

// schemaFor is the Policy's schema, else s's.
func (p *Policy) schemaFor(s *gocql.Session) Schema {
	if p.cfg.schema != nil || s == nil {
		return p.cfg.schema
	}
	return SessionSchema(s)
}

// pin prepares one execution of q for safe retries: a copy of q that carries a write
// timestamp drawn once (or ts), so every attempt, hedge and re-prepare
// sends the same one — gocql otherwise stamps each attempt anew and a late retry can
// overwrite newer data —, that is marked idempotent exactly when this execution is
// repeatable (its text, schema and bound values), and that retries through a policy of
// its own which sees each error before deciding.
func (p *Policy) pin(ctx context.Context, q *gocql.Query, c execConfig) (pinned, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	stmt, values := q.Statement(), q.Values()
	tv := p.classify(p.cfg.schema, q.Keyspace(), stmt)
	var ts int64 // drawn before the values are judged: a batch text's own USING TIMESTAMPs compare with it
	if tv.Writes {
		if ts = c.ts; ts == 0 {
			ts = p.cfg.clock.Next()
		}
	}
	v, err := c.apply(tv.AtTimestamp(ts).ForValues(values, gocqlValues{}))
	if err != nil {
		return pinned{}, err
	}
	if v.Writes {
		if err := p.refuseSkewed(); err != nil {
			return pinned{}, err
		}
	}
	op := c.operation
	if op == "" {
		op = "retry.Exec"
	}
	ctx, tr := p.begin(ctx, Execution{Operation: op, Keyspace: q.Keyspace(), Statement: stmt,
		Timestamp: ts, Idempotent: v.Idempotent, Reasons: v.Reasons})
	ctx, tr, hx := p.cfg.hedge.begin(ctx, tr, v.Idempotent && ts != 0) // hedge only the repeatable and pinned
	st := &execState{p: p, ctx: ctx, statement: stmt, verdict: v, trace: tr}
	out := q.WithContext(ctx)
	out.Idempotent(v.Idempotent).RetryPolicy(execPolicy{st: st})
	// Never gocql's speculative executions: one that finds no host answers
	// ErrNoConnections while the real attempt is in flight, which would read as
	// "nothing applied"; the session's own policy is not used. The Policy hedges itself
	// (hedgeExec.run).
	out.SetSpeculativeExecutionPolicy(&gocql.NonSpeculativeExecution{})
	if ts != 0 {
		out.WithTimestamp(ts)
	}
	return pinned{query: out, values: values, verdict: v, timestamp: ts, state: st, hedge: hx}, nil
}

// batchVerdict judges a batch executed at timestamp at (0: not known): idempotent iff
// every entry is (with its values) and it is not a COUNTER batch.
func (p *Policy) batchVerdict(schema Schema, b *gocql.Batch, at int64) Verdict {
	ks := b.Keyspace()
	var buf [4]Verdict // most batches: no allocation
	entries := buf[:0]
	if len(b.Entries) > len(buf) {
		entries = make([]Verdict, 0, len(b.Entries))
	}
	entries = entries[:len(b.Entries)]
	for i := range b.Entries {
		entries[i] = p.classify(schema, ks, b.Entries[i].Stmt).ForValues(b.Entries[i].Args, gocqlValues{})
	}
	return verdict.BatchAt(entries, func(i int) []any { return b.Entries[i].Args }, gocqlValues{},
		b.Type == gocql.CounterBatch, b.Type == gocql.LoggedBatch, at)
}

// pinBatch is pin for a batch: one timestamp for the whole batch (statements with their
// own USING TIMESTAMP keep theirs), idempotent iff every statement is. Without a schema
// of its own the Policy judges the entries against s's schema metadata.
func (p *Policy) pinBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch, c execConfig) (pinnedBatch, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ts := c.ts // drawn before the entries are judged: their own USING TIMESTAMPs compare with it
	if ts == 0 {
		ts = p.cfg.clock.Next()
	}
	v, err := c.apply(p.batchVerdict(p.schemaFor(s), b, ts))
	if err != nil {
		return pinnedBatch{}, err
	}
	if v.Writes {
		if err := p.refuseSkewed(); err != nil {
			return pinnedBatch{}, err
		}
	}
	op := c.operation
	if op == "" {
		op = "retry.ExecBatch"
	}
	var texts string // the statements' text, for a tracer only
	if p.cfg.tracer != nil {
		var sb strings.Builder
		for i, e := range b.Entries {
			if i > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(e.Stmt)
		}
		texts = sb.String()
	}
	ctx, tr := p.begin(ctx, Execution{Operation: op, Keyspace: b.Keyspace(), Statement: texts, Batch: true,
		Timestamp: ts, Idempotent: v.Idempotent, Reasons: v.Reasons})
	ctx, tr, hx := p.cfg.hedge.begin(ctx, tr, v.Idempotent) // a batch is always pinned
	st := &execState{p: p, ctx: ctx, statement: batchName(len(b.Entries)), verdict: v, trace: tr}
	out := b.WithContext(ctx)
	// gocql treats a batch as idempotent only when every entry is marked. The entries
	// are shared with the caller's batch: copy before marking them, unless they are
	// marked as the verdict says already (overwrite marks its own).
	for _, e := range b.Entries {
		if e.Idempotent != v.Idempotent {
			out.Entries = append([]gocql.BatchEntry(nil), b.Entries...)
			for i := range out.Entries {
				out.Entries[i].Idempotent = v.Idempotent
			}
			break
		}
	}
	out.RetryPolicy(execPolicy{st: st})
	out.WithTimestamp(ts)
	out.SpeculativeExecutionPolicy(&gocql.NonSpeculativeExecution{}) // see pin
	return pinnedBatch{batch: out, verdict: v, timestamp: ts, state: st, hedge: hx}, nil
}

// batchNames are batchName's answers for small batches, made once.
var batchNames = func() (names [17]string) {
	for i := range names {
		names[i] = fmt.Sprintf("BATCH(%d)", i)
	}
	return names
}()

// batchName is how a batch of n statements is named in events and errors: BATCH(n).
func batchName(n int) string {
	if n >= 0 && n < len(batchNames) {
		return batchNames[n]
	}
	return fmt.Sprintf("BATCH(%d)", n)
}

// Exec executes q with safe retries: one write timestamp pinned before the first attempt
// (from the Policy's clock, or AtTimestamp), retried as the Policy decides for this
// execution (see Policy). A write that failed in a way that may have applied it
// (timeouts, lost connections, the context ending while an attempt was in flight)
// returns an *OutcomeUnknownError carrying the statement, values and pinned timestamp;
// it goes to the outbox when one is configured and the write is repeatable. A context
// already done sends nothing and returns its error; so do invalid options.
func (p *Policy) Exec(ctx context.Context, q *gocql.Query, opts ...ExecOption) error {
	if q == nil {
		return errors.New("retry: nil query")
	}
	if p.err != nil {
		return p.err
	}
	c, err := execOptions(opts)
	if err != nil {
		return err
	}
	if run := doFrom(ctx); run != nil {
		return run.exec(ctx, p, q, c) // a step of Do: skipped or re-sent as Do decides
	}
	pq, err := p.pin(ctx, q, c)
	if err != nil {
		return err
	}
	return p.execPinned(pq)
}

func (p *Policy) execPinned(pq pinned) error {
	if err := pq.state.ctx.Err(); err != nil {
		pq.state.trace.End(err, 0)
		return err // nothing sent
	}
	var err error
	if pq.hedge == nil {
		err = pq.query.Exec()
	} else {
		var herrs []error
		herrs, err = pq.hedge.run(pq.query.Exec, hedgeOf(pq.query))
		pq.state.hedgeFailed(herrs)
	}
	if err != nil {
		stmt := Statement{CQL: pq.state.statement, Values: pq.values}
		err = p.outcome(err, pq.verdict, pq.timestamp, pq.state, false, gocql.UnloggedBatch, []Statement{stmt})
	}
	pq.state.end(err)
	return err
}

// hedgeOf is how a hedge of q runs: q with the hedge's context and a routing record of
// its own (see ownRouting). A function of its own, so that only the hedged path pays
// for the closure.
func hedgeOf(q *gocql.Query) func(context.Context) error {
	return func(ctx context.Context) error {
		hq := q.WithContext(ctx)
		ownRouting(hq)
		return hq.Exec()
	}
}

// hedgeOfBatch is how the first execution and a hedge of b run (see hedgeOf).
func hedgeOfBatch(s *gocql.Session, b *gocql.Batch) (first func() error, again func(context.Context) error) {
	return func() error { return s.ExecuteBatch(b) },
		func(ctx context.Context) error { return s.ExecuteBatch(b.WithContext(ctx)) }
}

// end reports the execution's end to its trace: attempts made, the failed ones and,
// unless a context error cut it short, the last.
func (st *execState) end(err error) {
	st.mu.Lock()
	attempts := st.attempts
	st.mu.Unlock()
	if err == nil || ClassifyError(err) != ClassCanceled {
		if err == nil || attempts == 0 {
			attempts++
		}
	}
	st.trace.End(err, attempts)
}

// ExecBatch is Exec for a batch on s: one timestamp for the whole batch (statements with
// their own USING TIMESTAMP keep theirs), repeatable iff every statement is and it is not
// a COUNTER batch. Without a schema of its own (WithSchema) the Policy judges the entries
// against s's schema metadata.
func (p *Policy) ExecBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch, opts ...ExecOption) error {
	if s == nil || b == nil {
		return errors.New("retry: nil session or batch")
	}
	if p.err != nil {
		return p.err
	}
	c, err := execOptions(opts)
	if err != nil {
		return err
	}
	if run := doFrom(ctx); run != nil {
		return run.execBatch(ctx, p, s, b, c) // a step of Do
	}
	pb, err := p.pinBatch(ctx, s, b, c)
	if err != nil {
		return err
	}
	return p.execPinnedBatch(s, pb)
}

func (p *Policy) execPinnedBatch(s *gocql.Session, pb pinnedBatch) error {
	if err := pb.state.ctx.Err(); err != nil {
		pb.state.trace.End(err, 0)
		return err // nothing sent
	}
	var err error
	if pb.hedge == nil {
		err = s.ExecuteBatch(pb.batch)
	} else {
		var herrs []error
		first, again := hedgeOfBatch(s, pb.batch)
		herrs, err = pb.hedge.run(first, again)
		pb.state.hedgeFailed(herrs)
	}
	if err != nil {
		stmts := make([]Statement, len(pb.batch.Entries))
		for i, e := range pb.batch.Entries {
			stmts[i] = Statement{CQL: e.Stmt, Values: e.Args}
		}
		err = p.outcome(err, pb.verdict, pb.timestamp, pb.state, true, pb.batch.Type, stmts)
	}
	pb.state.end(err)
	return err
}

// outcome turns the final error of an execution into what the caller gets: an
// *OutcomeUnknownError when a write may have applied, else err unchanged.
func (p *Policy) outcome(err error, v Verdict, ts int64, st *execState, batch bool, bt gocql.BatchType, stmts []Statement) error {
	f := facts(err)
	if f.BatchLogged {
		return fmt.Errorf("%w (timestamp %d): %w", ErrBatchLogged, ts, err)
	}
	class := f.Class
	st.mu.Lock()
	attempts, earlier := st.attempts, st.mayHaveApplied
	st.mu.Unlock()
	// A context that ended mid-attempt: gocql returns ctx.Err() whether or not the
	// request had been written (exec checked the context before sending).
	inFlight := class == ClassCanceled
	mayHave := class.MayHaveApplied() || inFlight || earlier ||
		f.NothingApplied() && !decision.ProvesNothingApplied(f, v) ||
		class == ClassNoHost && attempts > 0
	if !v.Writes || !mayHave {
		return err
	}
	if inFlight || attempts == 0 {
		attempts++ // gocql does not consult the policy after a context error
	}
	ou := &OutcomeUnknownError{Statements: stmts, Batch: batch, BatchType: bt, Timestamp: ts,
		Idempotent: v.Idempotent, Reasons: v.Reasons, Attempts: attempts, Err: err}
	if p.cfg.outbox != nil && v.Idempotent {
		if oerr := p.cfg.outbox.Append(ou); oerr != nil {
			return fmt.Errorf("%w (and the outbox append failed: %w)", ou, oerr)
		}
	}
	return ou
}
