package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// execState is one execution's record of its attempts (the engine's): the
// per-execution retry policy (execPolicy) feeds it, and the executor reads it when the
// execution ends.
type execState = engine.Exec

// execPolicy is the gocql.RetryPolicy of one pinned execution. gocql calls Attempt and
// then GetRetryType with the error, on the goroutine that ran the attempt; unlike a
// policy shared by many queries, this one can wait for the error before deciding, so
// the decision (engine.Exec.OnError) sees the error class, the verdict and the attempt
// count together. It sets no query observer: the session's observers stay in place.
//
// It holds one pointer, so that it converts to the interface without an allocation.
type execPolicy struct {
	st *execState
}

func (e execPolicy) Attempt(gocql.RetryableQuery) bool {
	e.st.OnAttempt()
	return true // decided in GetRetryType, which has the error
}

func (e execPolicy) GetRetryType(err error) gocql.RetryType {
	switch retry, next := e.st.OnError(err); {
	case !retry:
		return gocql.Rethrow
	case next:
		return gocql.RetryNextHost
	}
	return gocql.Retry
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

// schemaFor is the Policy's schema, else s's.
func (p *Policy) schemaFor(s *gocql.Session) Schema {
	if p.cfg.Schema != nil || s == nil {
		return p.cfg.Schema
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
	stmt, values := q.Statement(), q.Values()
	tv := p.classify(p.cfg.Schema, q.Keyspace(), stmt)
	var ts int64 // drawn before the values are judged: a batch text's own USING TIMESTAMPs compare with it
	if tv.Writes {
		if err := clientTimestamps(querySessionProto(q)); err != nil {
			return pinned{}, err
		}
		if ts = c.TS; ts == 0 {
			ts = p.cfg.Clock.Next()
		}
	}
	st, err := p.eng.Start(ctx, c, tv.AtTimestamp(ts).ForValues(values, gocqlValues{}),
		Execution{Keyspace: q.Keyspace(), Statement: stmt, Timestamp: ts}, "retry.Exec", stmt)
	if err != nil {
		return pinned{}, err
	}
	v := st.Verdict
	var hx *hedgeExec
	st.Ctx, st.Trace, hx = p.cfg.hedge.Begin(st.Ctx, st.Trace, v.Idempotent && ts != 0, q.GetConsistency().String()) // hedge only the repeatable and pinned
	out := q.WithContext(st.Ctx)
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
	if err := clientTimestamps(sessionProto(s)); err != nil {
		return pinnedBatch{}, err
	}
	ts := c.TS // drawn before the entries are judged: their own USING TIMESTAMPs compare with it
	if ts == 0 {
		ts = p.cfg.Clock.Next()
	}
	var texts string // the statements' text, for a tracer only
	if p.cfg.Tracer != nil {
		var sb strings.Builder
		for i, e := range b.Entries {
			if i > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(e.Stmt)
		}
		texts = sb.String()
	}
	st, err := p.eng.Start(ctx, c, p.batchVerdict(p.schemaFor(s), b, ts),
		Execution{Keyspace: b.Keyspace(), Statement: texts, Batch: true, Timestamp: ts},
		"retry.ExecBatch", batchName(len(b.Entries)))
	if err != nil {
		return pinnedBatch{}, err
	}
	v := st.Verdict
	var hx *hedgeExec
	st.Ctx, st.Trace, hx = p.cfg.hedge.Begin(st.Ctx, st.Trace, v.Idempotent, b.GetConsistency().String()) // a batch is always pinned
	out := b.WithContext(st.Ctx)
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
// already done sends nothing and returns its error; so do invalid options, and a write
// on a session speaking CQL protocol v1 or v2, which carry no client timestamp.
func (p *Policy) Exec(ctx context.Context, q *gocql.Query, opts ...ExecOption) error {
	if q == nil {
		return errors.New("retry: nil query")
	}
	if err := p.usable(); err != nil {
		return err
	}
	c, err := execOptions(opts)
	if err == nil {
		c, err = c.OwnTimestamp(engine.StatementTimestamp(q)) // the caller's WithTimestamp is the pin
	}
	if err != nil {
		return err
	}
	if run, _ := doFrom(ctx); run != nil {
		return doExec(ctx, run, p, q, c) // a step of Do: skipped or re-sent as Do decides
	}
	pq, err := p.pin(ctx, q, c)
	if err != nil {
		return err
	}
	return p.execPinned(pq)
}

func (p *Policy) execPinned(pq pinned) error {
	if err := pq.state.Ctx.Err(); err != nil {
		pq.state.Trace.End(err, 0)
		return err // nothing sent
	}
	var err error
	if pq.hedge == nil {
		err = execAgain(pq.state, pq.query.Exec)
	} else {
		var herrs []error
		herrs, err = pq.hedge.Run(func() error { return execAgain(pq.state, pq.query.Exec) }, hedgeOf(pq.query))
		pq.state.HedgeFailed(herrs)
	}
	if err != nil {
		stmt := Statement{CQL: pq.state.Statement, Values: pq.values}
		err = p.outcome(err, pq.timestamp, pq.state, false, gocql.UnloggedBatch, pq.query.GetConsistency().String(), []Statement{stmt})
	}
	pq.state.End(err)
	return err
}

// execAgain runs exec, and again while the driver finds no connection (Exec.Again).
func execAgain(st *execState, exec func() error) error {
	err := exec()
	for err != nil && st.Again(err) {
		err = exec()
	}
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
func hedgeOfBatch(st *execState, s *gocql.Session, b *gocql.Batch) (first func() error, again func(context.Context) error) {
	return func() error { return execAgain(st, func() error { return s.ExecuteBatch(b) }) },
		func(ctx context.Context) error { return s.ExecuteBatch(b.WithContext(ctx)) }
}

// ExecBatch is Exec for a batch on s: one timestamp for the whole batch (statements with
// their own USING TIMESTAMP keep theirs), repeatable iff every statement is and it is not
// a COUNTER batch. Without a schema of its own (WithSchema) the Policy judges the entries
// against s's schema metadata.
func (p *Policy) ExecBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch, opts ...ExecOption) error {
	if s == nil || b == nil {
		return errors.New("retry: nil session or batch")
	}
	if err := p.usable(); err != nil {
		return err
	}
	c, err := execOptions(opts)
	if err == nil {
		c, err = c.OwnTimestamp(engine.StatementTimestamp(b)) // the caller's WithTimestamp is the pin
	}
	if err != nil {
		return err
	}
	if run, _ := doFrom(ctx); run != nil {
		return doExecBatch(ctx, run, p, s, b, c) // a step of Do
	}
	pb, err := p.pinBatch(ctx, s, b, c)
	if err != nil {
		return err
	}
	return p.execPinnedBatch(s, pb)
}

func (p *Policy) execPinnedBatch(s *gocql.Session, pb pinnedBatch) error {
	if err := pb.state.Ctx.Err(); err != nil {
		pb.state.Trace.End(err, 0)
		return err // nothing sent
	}
	var err error
	if pb.hedge == nil {
		err = execAgain(pb.state, func() error { return s.ExecuteBatch(pb.batch) })
	} else {
		var herrs []error
		first, again := hedgeOfBatch(pb.state, s, pb.batch)
		herrs, err = pb.hedge.Run(first, again)
		pb.state.HedgeFailed(herrs)
	}
	if err != nil {
		stmts := make([]Statement, len(pb.batch.Entries))
		for i, e := range pb.batch.Entries {
			stmts[i] = Statement{CQL: e.Stmt, Values: e.Args}
		}
		err = p.outcome(err, pb.timestamp, pb.state, true, pb.batch.Type, pb.batch.GetConsistency().String(), stmts)
	}
	pb.state.End(err)
	return err
}

// outcome turns the final error of an execution into what the caller gets: an
// *OutcomeUnknownError when a write may have applied, else err unchanged.
func (p *Policy) outcome(err error, ts int64, st *execState, batch bool, bt gocql.BatchType, cl string, stmts []Statement) error {
	var record func(*OutcomeUnknownError) error
	if p.cfg.outbox != nil {
		record = p.cfg.outbox.Append
	}
	return engine.Outcome(st, err, ts, batch, bt, cl, stmts, record)
}
