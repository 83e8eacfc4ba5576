package otelcore

import (
	"context"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// ObserveQuery adds one attempt of a query, as the driver's QueryObserver saw it, to
// the span of the execution that ran it: ctx is the attempt's context, statement the
// query's text, host the driver's host (nil for none). Attempts are numbered by the
// execution in the order they are observed, not by the driver's count: the v2 driver
// restarts its count for each ExecContext (each hedge), and gocql v1.7 carries it over
// between executions of one *Query. A query run with an execution's context is one of its attempts only
// if it is the execution's statement: another query the caller runs with that context
// (inside retry.Do's function, say) is not. Queries no execution runs are ignored.
func (in *Instrumentation) ObserveQuery(ctx context.Context, statement string, host any, start, end time.Time, err error) {
	if t, ok := ctx.Value(traceKey{}).(*opTrace); ok && in != nil && t.in == in && !t.info.key.batch && t.info.key.statement == statement {
		t.observe(observed{start: start, latency: end.Sub(start), err: err, host: host})
	}
}

// ObserveBatch is ObserveQuery for a batch of size statements.
func (in *Instrumentation) ObserveBatch(ctx context.Context, size int, host any, start, end time.Time, err error) {
	if t, ok := ctx.Value(traceKey{}).(*opTrace); ok && in != nil && t.in == in && t.info.key.batch {
		if t.batchSized.CompareAndSwap(false, true) {
			t.span.SetAttributes(semconv.DBOperationBatchSize(size))
		}
		t.observe(observed{start: start, latency: end.Sub(start), err: err, host: host})
	}
}
