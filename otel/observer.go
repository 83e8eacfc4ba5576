package cqlsafeotel

import (
	"context"
	"time"

	"github.com/gocql/gocql"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// QueryObserver returns a gocql.QueryObserver that adds each attempt of an execution
// the Instrumentation follows to its span (host, latency, error class), then calls next
// (may be nil): set cluster.QueryObserver = inst.QueryObserver(cluster.QueryObserver).
// Queries that no retry execution runs pass straight to next. Bound values are never
// read.
func (in *Instrumentation) QueryObserver(next gocql.QueryObserver) gocql.QueryObserver {
	return queryObserver{in: in, next: next}
}

// BatchObserver is QueryObserver for batches: set
// cluster.BatchObserver = inst.BatchObserver(cluster.BatchObserver).
func (in *Instrumentation) BatchObserver(next gocql.BatchObserver) gocql.BatchObserver {
	return batchObserver{in: in, next: next}
}

type queryObserver struct {
	in   *Instrumentation
	next gocql.QueryObserver
}

func (o queryObserver) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	// A query run with an execution's context is one of its attempts only if it is the
	// execution's statement: another query the caller runs with that context (inside
	// retry.Do's function, say) is not.
	if t, ok := ctx.Value(traceKey{}).(*opTrace); ok && o.in != nil && t.in == o.in && !t.info.key.batch && t.info.key.statement == q.Statement {
		t.observe(observedAttempt(q.Host, q.Attempt, q.Start, q.End, q.Err))
	}
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

type batchObserver struct {
	in   *Instrumentation
	next gocql.BatchObserver
}

func (o batchObserver) ObserveBatch(ctx context.Context, b gocql.ObservedBatch) {
	if t, ok := ctx.Value(traceKey{}).(*opTrace); ok && o.in != nil && t.in == o.in && t.info.key.batch {
		if b.Attempt == 0 {
			t.span.SetAttributes(semconv.DBOperationBatchSize(len(b.Statements)))
		}
		t.observe(observedAttempt(b.Host, b.Attempt, b.Start, b.End, b.Err))
	}
	if o.next != nil {
		o.next.ObserveBatch(ctx, b)
	}
}

func observedAttempt(h *gocql.HostInfo, attempt int, start, end time.Time, err error) observed {
	return observed{attempt: attempt, start: start, latency: end.Sub(start), err: err, host: h}
}
