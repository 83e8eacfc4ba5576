package retry

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gocql/gocql"
)

// observer records each attempt's outcome in the execution state it finds in the
// attempt's context, for Attempt to read right after.
type observer struct{}

func (observer) ObserveQuery(ctx context.Context, o gocql.ObservedQuery) {
	record(ctx, o.Err, o.Values)
}
func (observer) ObserveBatch(ctx context.Context, o gocql.ObservedBatch) { record(ctx, o.Err, nil) }

func record(ctx context.Context, err error, values []any) {
	if st := stateFrom(ctx); st != nil {
		st.mu.Lock()
		st.attempts++
		st.lastErr = err
		if st.values == nil {
			st.values = values
		}
		st.mu.Unlock()
	}
}

// Pinned is a query prepared by Pin: the query to execute, its verdict and timestamp.
type Pinned struct {
	Query     *gocql.Query
	Verdict   Verdict
	Timestamp int64 // 0 for reads: nothing to pin
	stmt      Statement
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
//   - is marked idempotent exactly when Classify says so;
//   - retries through this policy, counting attempts for this execution only.
//
// Pin once per execution; execute the returned query once. ts, if non-zero, is the
// timestamp to pin instead of a fresh one (to re-apply a write with its original
// timestamp). Reads get no timestamp.
func (p *Policy) Pin(ctx context.Context, q *gocql.Query, ts int64) Pinned {
	return p.pin(ctx, q, statementOf(q), ts)
}

// Query is Pin for a statement given as text and values: it builds the query on s
// itself, which spares recovering the text from the *gocql.Query (gocql v1.7.0 only
// offers it formatted with the values, which is costly for large values).
func (p *Policy) Query(ctx context.Context, s *gocql.Session, ts int64, stmt string, values ...any) Pinned {
	return p.pin(ctx, s.Query(stmt, values...), Statement{CQL: stmt}, ts)
}

func (p *Policy) pin(ctx context.Context, q *gocql.Query, stmt Statement, ts int64) Pinned {
	v := p.classify(stmt.CQL)
	st := &execState{statement: stmt.CQL}
	out := q.WithContext(context.WithValue(ctx, stateKey{}, st))
	out.Idempotent(v.Idempotent).RetryPolicy(p).Observer(observer{})
	if v.Writes {
		if ts == 0 {
			ts = p.cfg.clock.Next()
		}
		out.WithTimestamp(ts)
	} else {
		ts = 0
	}
	return Pinned{Query: out, Verdict: v, Timestamp: ts, stmt: stmt, state: st}
}

// PinBatch is Pin for a batch: one timestamp for the whole batch (statements with their
// own USING TIMESTAMP keep theirs), idempotent iff every statement is.
func (p *Policy) PinBatch(ctx context.Context, b *gocql.Batch, ts int64) PinnedBatch {
	st := &execState{statement: "BATCH"}
	out := b.WithContext(context.WithValue(ctx, stateKey{}, st))
	// The entries are shared with the caller's batch; copy before marking them.
	out.Entries = append([]gocql.BatchEntry(nil), b.Entries...)
	v := Verdict{Idempotent: true, Kind: KindBatch}
	for i := range out.Entries {
		ev := p.classify(out.Entries[i].Stmt)
		out.Entries[i].Idempotent = ev.Idempotent
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
		for i := range out.Entries {
			out.Entries[i].Idempotent = false
		}
	}
	out.RetryPolicy(p).Observer(observer{})
	if ts == 0 {
		ts = p.cfg.clock.Next()
	}
	out.WithTimestamp(ts)
	return PinnedBatch{Batch: out, Verdict: v, Timestamp: ts, state: st}
}

// Exec pins q (see Pin) and executes it. A write that failed with a class that may have
// applied it (timeouts, lost connections) returns an *OutcomeUnknownError carrying the
// statement, values and pinned timestamp; it is appended to the outbox when one is
// configured and the write is idempotent.
func (p *Policy) Exec(ctx context.Context, q *gocql.Query) error {
	return p.execPinned(p.Pin(ctx, q, 0))
}

// Exec executes a pinned query once (with its retries), with Policy.Exec's error
// contract.
func (pq Pinned) Exec(p *Policy) error { return p.execPinned(pq) }

func (p *Policy) execPinned(pq Pinned) error {
	err := pq.Query.Exec()
	if err == nil {
		return nil
	}
	pq.state.mu.Lock()
	stmt := Statement{CQL: pq.stmt.CQL, Values: pq.state.values}
	pq.state.mu.Unlock()
	return p.outcome(err, pq.Verdict, pq.Timestamp, pq.state, false, []Statement{stmt})
}

// ExecBatch pins b (see PinBatch) and executes it, with Exec's error contract.
func (p *Policy) ExecBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch) error {
	pb := p.PinBatch(ctx, b, 0)
	return p.execPinnedBatch(s, pb)
}

func (p *Policy) execPinnedBatch(s *gocql.Session, pb PinnedBatch) error {
	err := s.ExecuteBatch(pb.Batch)
	if err == nil {
		return nil
	}
	stmts := make([]Statement, len(pb.Batch.Entries))
	for i, e := range pb.Batch.Entries {
		stmts[i] = Statement{CQL: e.Stmt, Values: e.Args}
	}
	return p.outcome(err, pb.Verdict, pb.Timestamp, pb.state, true, stmts)
}

func (p *Policy) outcome(err error, v Verdict, ts int64, st *execState, batch bool, stmts []Statement) error {
	if !v.Writes || !ClassifyError(err).MayHaveApplied() {
		return err
	}
	st.mu.Lock()
	attempts := st.attempts
	st.mu.Unlock()
	ou := &OutcomeUnknownError{Statements: stmts, Batch: batch, Timestamp: ts,
		Idempotent: v.Idempotent, Attempts: attempts, Err: err}
	if p.cfg.outbox != nil && v.Idempotent {
		if oerr := p.cfg.outbox.Append(ou); oerr != nil {
			return fmt.Errorf("%w (and the outbox append failed: %v)", ou, oerr)
		}
	}
	return ou
}

// statementOf recovers the statement text of a *gocql.Query. gocql v1.7.0 exposes it
// only through String(), which quotes it with %q. (Values are taken from the first
// attempt's observation.)
func statementOf(q *gocql.Query) Statement {
	s := q.String()
	const prefix = "[query statement="
	if !strings.HasPrefix(s, prefix) {
		return Statement{}
	}
	quoted, err := strconv.QuotedPrefix(s[len(prefix):])
	if err != nil {
		return Statement{}
	}
	text, err := strconv.Unquote(quoted)
	if err != nil {
		return Statement{}
	}
	return Statement{CQL: text}
}

// ExecBatchAt pins b to timestamp ts (see PinBatch) and executes it, with Exec's error
// contract. Callers that reserve timestamps themselves (overwrite) use it.
func (p *Policy) ExecBatchAt(ctx context.Context, s *gocql.Session, b *gocql.Batch, ts int64) error {
	return p.execPinnedBatch(s, p.PinBatch(ctx, b, ts))
}
