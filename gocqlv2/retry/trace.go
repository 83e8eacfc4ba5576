package retry

import "github.com/cqlsafe/cqlsafe/internal/core/engine"

// Tracer follows logical executions, for observability (WithTracer; package otel adapts
// it to OpenTelemetry): Begin once per Exec, ExecBatch or Do, then the Trace it returns
// hears every failed attempt with the decision taken, and the end. The attempts run
// with the context Begin returns, so gocql's query and batch observers — which see
// each attempt's host and latency — find there whatever Begin put in it (a span).
// Implementations must be safe for concurrent use and fast: they run on the hot path.
// A Trace that also implements HedgeTrace hears of the hedges of a hedged execution
// (WithHedging).
type Tracer = engine.Tracer

// Trace is one execution's record. Attempt is called after each failed attempt (the
// Event says whether it is retried, why not, and the wait); End exactly once, with the
// error the caller gets (nil on success) and the number of attempts made. A hedge's
// failed attempts (WithHedging) reach Attempt as the first execution's do — gocql runs
// them with the same retry policy —, and attempts counts them with the last one, not
// those still in flight when the execution ended. A Trace may also implement
// HedgeTrace.
type Trace = engine.Trace

// HedgeTrace is what a Trace may implement, besides Trace, to hear of hedges
// (WithHedging): Hedged is called once, before End, for an execution the Policy
// offered for hedging (repeatable and pinned, on a session whose host selection went
// through HedgingHosts) in which at least one hedge was sent. It is called on the
// goroutine that calls End.
type HedgeTrace = engine.HedgeTrace

// Hedges describes the hedges of one execution (HedgeTrace).
type Hedges = engine.Hedges

// Execution describes one logical execution to a Tracer. It never holds bound values.
type Execution = engine.Execution

// Operation names the execution for a Tracer (default "retry.Exec" or
// "retry.ExecBatch"): packages built on retry pass theirs ("overwrite.Row").
func Operation(name string) ExecOption { return engine.Operation(name) }

// WithTracer follows every execution with t (see Tracer). nil removes it.
func WithTracer(t Tracer) Option { return set(engine.WithTracer(t)) }
