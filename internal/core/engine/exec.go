package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// Exec is one execution's record of its attempts. The adapter's per-execution retry
// policy calls OnAttempt and OnError; the adapter reads Final when the execution ends.
type Exec struct {
	e         *Engine
	Ctx       context.Context // the execution's context (a Tracer's, a hedge's)
	Trace     Trace
	Statement string // in events: the text, or BATCH(n)
	Verdict   verdict.Verdict
	mu        sync.Mutex
	attempts  int // attempts that failed and were seen by the policy
	lastWhy   string
	// mayHaveApplied: some attempt failed in a way that may have applied the write; the
	// outcome is then unknown whatever the last attempt's error says.
	mayHaveApplied bool
}

// Start begins one execution judged v (its text, values and timestamp): c's options
// applied, a write refused while the clock is skewed, its trace begun with x (Operation
// defaulting to op). Nothing has been sent when it returns an error.
func (e *Engine) Start(ctx context.Context, c ExecConfig, v verdict.Verdict, x Execution, op, statement string) (*Exec, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	v, err := c.Apply(v)
	if err != nil {
		return nil, err
	}
	if v.Writes && v.Unbound() {
		// The driver would call the binder again on every attempt and hedge: another
		// id minted per send writes another row, and nothing records what was sent.
		return nil, ErrUnboundValues
	}
	if v.Writes {
		if err := e.RefuseSkewed(); err != nil {
			return nil, err
		}
	}
	x.Operation = c.Operation
	if x.Operation == "" {
		x.Operation = op
	}
	x.Idempotent, x.Reasons = v.Idempotent, v.Reasons
	ctx, tr := e.Begin(ctx, x)
	x2 := e.NewExec(ctx, v, statement)
	x2.Trace = tr
	return x2, nil
}

// NewExec is an execution's record without Start's checks and trace (tests, and
// adapters that judge on their own).
func (e *Engine) NewExec(ctx context.Context, v verdict.Verdict, statement string) *Exec {
	return &Exec{e: e, Ctx: ctx, Trace: NopTrace{}, Statement: statement, Verdict: v}
}

// OnAttempt counts an attempt about to be sent (the driver's RetryPolicy.Attempt, which
// is asked before the error is known: the decision is OnError's).
func (x *Exec) OnAttempt() {
	x.mu.Lock()
	x.attempts++
	x.mu.Unlock()
}

// OnError decides after a failed attempt, with the error class, the verdict and the
// attempt count together; it reports the decision, waits the backoff when retrying, and
// says whether to retry and whether on the next host.
func (x *Exec) OnError(err error) (retry, nextHost bool) {
	e := x.e
	x.mu.Lock()
	attempts, v := x.attempts, x.Verdict
	x.mu.Unlock()
	f := e.facts(err)
	if decision.AttemptMayHaveApplied(f, v) {
		x.mu.Lock()
		x.mayHaveApplied = true
		x.mu.Unlock()
	}
	retry, reason := e.Decide(x.Ctx, err, v, true, attempts)
	ev := Event{Attempt: attempts, Err: err, Class: f.Class, Idempotent: v.Idempotent,
		Statement: x.Statement, Retrying: retry}
	if retry {
		ev.Delay = e.Delay(attempts)
		ev.NextHost = decision.NextHost(f, e.cfg.NextHost)
	} else {
		ev.Reason, ev.Why = reason, decision.Why(reason, f.Class)
	}
	e.Report(ev)
	x.Trace.Attempt(ev)
	if !retry {
		x.mu.Lock()
		x.lastWhy = ev.Why
		x.mu.Unlock()
		return false, false
	}
	if wait.Sleep(x.Ctx, ev.Delay) != nil {
		return false, false
	}
	return true, ev.NextHost
}

// Again says whether to run the driver's execution again after it failed with err:
// only when err is the driver finding no connection to send on. The driver asks no
// retry policy then — nothing was sent — so Again decides it as a failed attempt:
// counted, reported, backed off (it waits), bounded by the attempt limit and the
// context. A pool that is refilling (a node restarting, a connection the driver closed
// after a timeout) is waited for, as any other "nothing applied" error is retried.
// Adapters loop: for err != nil && x.Again(err) { err = run() }.
func (x *Exec) Again(err error) bool {
	if x.e.facts(err).Class != decision.ClassNoHost {
		return false
	}
	x.OnAttempt()
	retry, _ := x.OnError(err)
	return retry
}

// Attempts is the number of failed attempts the policy saw.
func (x *Exec) Attempts() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.attempts
}

// LastWhy is why the last failed attempt was not retried ("" if it was).
func (x *Exec) LastWhy() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lastWhy
}

// HedgeFailed notes how the hedges of a failed execution failed: when one may have
// applied the write, so may the execution have, whatever the first execution's error
// says. A hedge ended by the context is one the driver never shows the retry policy.
func (x *Exec) HedgeFailed(errs []error) {
	for _, err := range errs {
		if decision.AttemptMayHaveApplied(x.e.facts(err), x.Verdict) {
			x.mu.Lock()
			x.mayHaveApplied = true
			x.mu.Unlock()
			return
		}
	}
}

// End reports the execution's end to its trace: attempts made, the failed ones and,
// unless a context error cut it short, the last.
func (x *Exec) End(err error) {
	attempts := x.Attempts()
	if err == nil || x.e.facts(err).Class != decision.ClassCanceled {
		if err == nil || attempts == 0 {
			attempts++
		}
	}
	x.Trace.End(err, attempts)
}

// Unknown is what the final error err of a write may leave: ErrBatchLogged wrapped when a
// logged batch reached the batch log; else whether the outcome is unknown (the write may
// have applied) and the attempts to report.
func (x *Exec) Unknown(err error, ts int64) (unknown bool, attempts int, logged error) {
	f := x.e.facts(err)
	if f.BatchLogged {
		return false, 0, fmt.Errorf("%w (timestamp %d): %w", ErrBatchLogged, ts, err)
	}
	class := f.Class
	x.mu.Lock()
	attempts, earlier := x.attempts, x.mayHaveApplied
	x.mu.Unlock()
	// A context that ended mid-attempt: the driver returns ctx.Err() whether or not the
	// request had been written (the adapter checked the context before sending).
	inFlight := class == decision.ClassCanceled
	// An earlier attempt that may have applied the write is remembered (OnError,
	// HedgeFailed): a last run that found no connection (Again) says nothing of it.
	mayHave := class.MayHaveApplied() || inFlight || earlier ||
		f.NothingApplied() && !decision.ProvesNothingApplied(f, x.Verdict)
	if !x.Verdict.Writes || !mayHave {
		return false, 0, nil
	}
	if inFlight || attempts == 0 {
		attempts++ // the driver does not consult the policy after a context error
	}
	return true, attempts, nil
}

// Outcome turns the final error of an execution into what the caller gets: the
// ErrBatchLogged error, an *OutcomeUnknownError when a write may have applied (handed to
// record, the Policy's outbox, when it is repeatable), else err unchanged.
func Outcome[B any](x *Exec, err error, ts int64, batch bool, bt B, consistency string, stmts []Statement,
	record func(*OutcomeUnknownError[B]) error) error {
	unknown, attempts, logged := x.Unknown(err, ts)
	if logged != nil {
		return logged
	}
	if !unknown {
		return err
	}
	v := x.Verdict
	// The error outlives the call: its values are a copy, so a caller reusing its
	// arguments (a buffer, a slice it appends to) cannot change what it says was sent.
	own := make([]Statement, len(stmts))
	for i, st := range stmts {
		own[i] = Statement{CQL: st.CQL, Values: Snapshot(st.Values)}
	}
	ou := &OutcomeUnknownError[B]{Statements: own, Batch: batch, BatchType: bt, Timestamp: ts,
		Idempotent: v.Idempotent, Reasons: slices.Clone(v.Reasons), Conditional: v.Conditional, Attempts: attempts, Err: err, Consistency: consistency}
	if record != nil && v.Idempotent {
		if oerr := record(ou); oerr != nil {
			ou.RecordErr = oerr
		} else {
			ou.Recorded = true
		}
	}
	return ou
}
