package otelcore

import (
	"context"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// ObserveQuery adds one attempt of a query, as the driver's QueryObserver saw it, to
// the span of the execution that ran it: ctx is the attempt's context, statement the
// query's text, host the driver's host (nil for none), attempt the driver's count (0
// for the first). A query run with an execution's context is one of its attempts only
// if it is the execution's statement: another query the caller runs with that context
// (inside retry.Do's function, say) is not. Queries no execution runs are ignored.
func (in *Instrumentation) ObserveQuery(ctx context.Context, statement string, host any, attempt int, start, end time.Time, err error) {
	if t, ok := ctx.Value(traceKey{}).(*opTrace); ok && in != nil && t.in == in && !t.info.key.batch && t.info.key.statement == statement {
		t.observe(observed{attempt: attempt, start: start, latency: end.Sub(start), err: err, host: host})
	}
}

// ObserveBatch is ObserveQuery for a batch of size statements.
func (in *Instrumentation) ObserveBatch(ctx context.Context, size int, host any, attempt int, start, end time.Time, err error) {
	if t, ok := ctx.Value(traceKey{}).(*opTrace); ok && in != nil && t.in == in && t.info.key.batch {
		if attempt == 0 {
			t.span.SetAttributes(semconv.DBOperationBatchSize(size))
		}
		t.observe(observed{attempt: attempt, start: start, latency: end.Sub(start), err: err, host: host})
	}
}
