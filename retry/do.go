package retry

import (
	"context"
	"errors"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// Do runs multi-statement work with retry instead of rollback. fn issues its writes
// through Exec and ExecBatch with the ctx it is given; each such call is a step. When a
// step fails with a retryable error and is idempotent, Do waits (backoff) and calls fn
// again: steps that already succeeded return nil at once without touching Cassandra,
// and the failed step is re-sent with the timestamp it was pinned to the first time.
// Nothing is undone. fn must issue the same statements with the same values in the same
// order on every run — mint ids and times before Do, not inside fn — else the step
// returns ErrNondeterministic and nothing is sent; fn should hold no other side effects.
//
// Do gives up and returns the error when it is not retryable (errors fn returns on its
// own are not), when the failed step is not idempotent, when the policy's attempts are
// exhausted, or when ctx is done. Within each step the policy also retries at once on
// its own, as Exec does.
//
// Do builds its Policy from opts for this one call; p.Do runs under a Policy p that
// lives longer, sharing its hedge budget, delays and caches with p's other executions.
func Do(ctx context.Context, fn func(ctx context.Context) error, opts ...Option) error {
	if fn == nil {
		return errors.New("retry: Do needs a function")
	}
	p := NewPolicy(opts...)
	if p.err != nil {
		return p.err
	}
	if p.cfg.hedgeHere {
		return ErrDoHedging
	}
	return engine.Do(ctx, p.eng, p, fn)
}

// ErrDoHedging is Do's answer, before fn runs, to a WithHedging among its options: the
// Policy Do builds lives for one call, so each call would start with a full budget of
// losing hedges and the budget would bound nothing. Hedge under a Policy that lives
// longer: p.Do(ctx, fn), or Do(ctx, fn, WithPolicy(p)).
var ErrDoHedging = engine.ErrDoHedging

// Do is the package's Do under p: each step runs as p.Exec would, and draws on what p
// shares across its executions — the hedge budget and delay, the verdict cache, the
// clock offset.
func (p *Policy) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if fn == nil {
		return errors.New("retry: Do needs a function")
	}
	if err := p.usable(); err != nil {
		return err
	}
	return engine.Do(ctx, p.eng, p, fn)
}

// ErrOutsideDo is returned by the package-level Exec and ExecBatch when their context
// does not come from Do: outside Do, run statements with Policy.Exec.
var ErrOutsideDo = engine.ErrOutsideDo

// Exec is one step of the function given to Do, under Do's policy: skipped when a
// previous run already applied it, re-sent with its first timestamp and values
// otherwise (see Do). ctx must be the one Do passed to the function: elsewhere Exec
// sends nothing and returns ErrOutsideDo. (Policy.Exec with Do's context is a step too,
// under that Policy.)
func Exec(ctx context.Context, q *gocql.Query) error {
	run, p := doFrom(ctx)
	if run == nil {
		return ErrOutsideDo
	}
	return doExec(ctx, run, p, q, execConfig{})
}

// ExecBatch is Exec for a batch on s: one step of the function given to Do.
func ExecBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch) error {
	run, p := doFrom(ctx)
	if run == nil {
		return ErrOutsideDo
	}
	return doExecBatch(ctx, run, p, s, b, execConfig{})
}

// doFrom is the run of this package's Do that ctx belongs to, with its Policy; nil when
// there is none — or when ctx belongs to another driver's Do (a process linking both
// drivers): a step of one driver is never a step of the other's run.
func doFrom(ctx context.Context) (*engine.DoRun, *Policy) {
	run := engine.DoFrom(ctx)
	if run == nil {
		return nil, nil
	}
	p, ok := run.Policy.(*Policy)
	if !ok {
		return nil, nil
	}
	return run, p
}

// doExec runs q as a step of run, under p (Do's, or the Policy whose Exec was called
// with Do's context).
func doExec(ctx context.Context, run *engine.DoRun, p *Policy, q *gocql.Query, c execConfig) error {
	if q == nil {
		return errors.New("retry: nil query")
	}
	return run.Step(q.Statement(), engine.Snapshot(q.Values()), c, func(c execConfig) engine.Sent {
		pq, err := p.pin(ctx, q, c)
		if err != nil {
			return engine.Sent{Err: err}
		}
		return engine.Sent{Sent: true, Timestamp: pq.timestamp, Verdict: pq.verdict, Err: p.execPinned(pq)}
	})
}

// doExecBatch is doExec for a batch on s.
func doExecBatch(ctx context.Context, run *engine.DoRun, p *Policy, s *gocql.Session, b *gocql.Batch, c execConfig) error {
	if s == nil || b == nil {
		return errors.New("retry: nil session or batch")
	}
	keys := make([]string, len(b.Entries))
	var values []any
	for i, e := range b.Entries {
		keys[i] = e.Stmt
		values = append(values, engine.Snapshot(e.Args)...)
	}
	return run.Step(engine.BatchKey(keys), values, c, func(c execConfig) engine.Sent {
		pb, err := p.pinBatch(ctx, s, b, c)
		if err != nil {
			return engine.Sent{Err: err}
		}
		return engine.Sent{Sent: true, Timestamp: pb.timestamp, Verdict: pb.verdict, Err: p.execPinnedBatch(s, pb)}
	})
}
