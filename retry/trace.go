package retry

import (
	"context"
	"errors"
	"time"
)

// Tracer follows logical executions, for observability (WithTracer; package otel adapts
// it to OpenTelemetry): Begin once per Exec, ExecBatch or Do, then the Trace it returns
// hears every failed attempt with the decision taken, and the end. The attempts run
// with the context Begin returns, so gocql's query and batch observers — which see
// each attempt's host and latency — find there whatever Begin put in it (a span).
// Implementations must be safe for concurrent use and fast: they run on the hot path.
// A Trace that also implements HedgeTrace hears of the hedges of a hedged execution
// (WithHedging).
type Tracer interface {
	Begin(ctx context.Context, x Execution) (context.Context, Trace)
}

// Trace is one execution's record. Attempt is called after each failed attempt (the
// Event says whether it is retried, why not, and the wait); End exactly once, with the
// error the caller gets (nil on success) and the number of attempts made. A hedge's
// failed attempts (WithHedging) reach Attempt as the first execution's do — gocql runs
// them with the same retry policy —, and attempts counts them with the last one, not
// those still in flight when the execution ended. A Trace may also implement
// HedgeTrace.
type Trace interface {
	Attempt(Event)
	End(err error, attempts int)
}

// HedgeTrace is what a Trace may implement, besides Trace, to hear of hedges
// (WithHedging): Hedged is called once, before End, for an execution the Policy
// offered for hedging (repeatable and pinned, on a session whose host selection went
// through HedgingHosts) in which at least one hedge was sent. It is called on the
// goroutine that calls End.
type HedgeTrace interface {
	Hedged(Hedges)
}

// Hedges describes the hedges of one execution (HedgeTrace).
type Hedges struct {
	// Sent is the number of hedges sent: hedge k at Start + k×Delay unless an answer
	// came first, up to HedgeMaxInFlight − 1 of them, each while the budget held one
	// (HedgeBudget).
	Sent int
	// Delay is the hedge delay the execution ran with.
	Delay time.Duration
	// Start is when the Policy set the hedge timer, just before the first execution
	// asked gocql for its host. No hedge starts before Start + Delay: an attempt
	// (gocql.ObservedQuery Start) that started earlier belongs to the first execution;
	// one that started later is a hedge's or a retry's.
	Start time.Time
	// Won says a hedge answered first, with success: the first execution was cancelled
	// and the hedge's answer is the execution's. A hedge that did not win was wasted:
	// the first answered first (or the execution failed).
	Won bool
}

// Execution describes one logical execution to a Tracer. It never holds bound values.
type Execution struct {
	// Operation names what runs: "retry.Exec", "retry.ExecBatch", "retry.Do", or the
	// caller's name given with the Operation exec option ("overwrite.Row", …).
	Operation string
	Keyspace  string
	// Statement is the CQL text (of a batch: its statements, one per line).
	Statement  string
	Batch      bool
	Timestamp  int64 // the pinned write timestamp (0 for reads and Do)
	Idempotent bool  // the verdict: repeatable
	Reasons    []string
}

// Operation names the execution for a Tracer (default "retry.Exec" or
// "retry.ExecBatch"): packages built on retry pass theirs ("overwrite.Row").
func Operation(name string) ExecOption {
	if name == "" {
		return ExecOption{err: errors.New("retry: Operation needs a name")}
	}
	return ExecOption{operation: name}
}

// WithTracer follows every execution with t (see Tracer). nil removes it.
func WithTracer(t Tracer) Option {
	return func(c *config) error { c.tracer = t; return nil }
}

// nopTrace is the Trace of an execution no Tracer follows.
type nopTrace struct{}

func (nopTrace) Attempt(Event)  {}
func (nopTrace) End(error, int) {}

// begin starts the execution's trace.
func (p *Policy) begin(ctx context.Context, x Execution) (context.Context, Trace) {
	if p.cfg.tracer == nil {
		return ctx, nopTrace{}
	}
	tctx, tr := p.cfg.tracer.Begin(ctx, x)
	if tctx == nil {
		tctx = ctx
	}
	if tr == nil {
		tr = nopTrace{}
	}
	return tctx, tr
}
