package retry

import (
	"context"
	"errors"
)

// Tracer follows logical executions, for observability (WithTracer; package otel adapts
// it to OpenTelemetry): Begin once per Exec, ExecBatch or Do, then the Trace it returns
// hears every failed attempt with the decision taken, and the end. The attempts run
// with the context Begin returns, so gocql's query and batch observers — which see
// each attempt's host and latency — find there whatever Begin put in it (a span).
// Implementations must be safe for concurrent use and fast: they run on the hot path.
type Tracer interface {
	Begin(ctx context.Context, x Execution) (context.Context, Trace)
}

// Trace is one execution's record. Attempt is called after each failed attempt (the
// Event says whether it is retried, why not, and the wait); End exactly once, with the
// error the caller gets (nil on success) and the number of attempts made.
type Trace interface {
	Attempt(Event)
	End(err error, attempts int)
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
	return func(c *execConfig) error {
		if name == "" {
			return errors.New("retry: Operation needs a name")
		}
		c.operation = name
		return nil
	}
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
