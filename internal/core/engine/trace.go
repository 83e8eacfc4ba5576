package engine

import (
	"context"
	"time"
)

// Tracer begins a Trace for each execution (the adapters document it as retry.Tracer).
type Tracer interface {
	Begin(ctx context.Context, x Execution) (context.Context, Trace)
}

// Trace hears one execution's failed attempts and its end.
type Trace interface {
	Attempt(Event)
	End(err error, attempts int)
}

// HedgeTrace is a Trace that also hears an execution's hedges.
type HedgeTrace interface {
	Hedged(Hedges)
}

// Hedges is what hedging did for one execution.
type Hedges struct {
	// Sent is the number of hedges sent: hedge k at Start + k×Delay unless an answer
	// came first, up to HedgeMaxInFlight − 1 of them, each while the budget held one
	// (HedgeBudget).
	Sent int
	// Delay is the hedge delay the execution ran with.
	Delay time.Duration
	// Start is when the Policy set the hedge timer, just before the first execution
	// asked the driver for its host. No hedge starts before Start + Delay: an attempt
	// (the driver's ObservedQuery Start) that started earlier belongs to the first execution;
	// one that started later is a hedge's or a retry's.
	Start time.Time
	// Won says a hedge answered first, with success: the first execution was cancelled
	// and the hedge's answer is the execution's. A hedge that did not win was wasted:
	// the first answered first (or the execution failed).
	Won bool
}

// Execution is what a Tracer is told when an execution begins.
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

// NopTrace hears nothing.
type NopTrace struct{}

func (NopTrace) Attempt(Event)  {}
func (NopTrace) End(error, int) {}

// Begin begins x's trace with the Policy's Tracer; NopTrace without one.
func (e *Engine) Begin(ctx context.Context, x Execution) (context.Context, Trace) {
	if e.cfg.Tracer == nil {
		return ctx, NopTrace{}
	}
	tctx, tr := e.cfg.Tracer.Begin(ctx, x)
	if tctx == nil {
		tctx = ctx
	}
	if tr == nil {
		tr = NopTrace{}
	}
	return tctx, tr
}
