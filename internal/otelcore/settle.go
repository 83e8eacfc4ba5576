package otelcore

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	settle "github.com/cqlsafe/cqlsafe/internal/core/settle"
)

// settleKey is what a settle measurement's attributes are made of.
type settleKey struct{ kind, outcome, errType string }

// Settled records one settle.Write or settle.LWT call (settle.Observer): it counts it in
// cqlsafe.settle.results by kind, outcome and, when it failed, error.type, and adds a
// "settle" event to the span in ctx when that span records.
func (in *Instrumentation) Settled(ctx context.Context, r settle.Report) {
	if in == nil {
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var errType string
	if r.Err != nil {
		errType = in.settleErrorType(r.Err)
	}
	k := settleKey{kind: r.Kind, outcome: r.Outcome, errType: errType}
	set, ok := in.settles.load(k)
	if !ok {
		attrs := []attribute.KeyValue{semconv.DBSystemNameCassandra, attrSettleKind.String(k.kind), attrSettleOutcome.String(k.outcome)}
		if k.errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(k.errType))
		}
		set = in.settles.store(k, metric.WithAttributeSet(attribute.NewSet(attrs...)), maxMeasureSets)
	}
	in.settleResults.Add(ctx, 1, set)

	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{attrSettleKind.String(r.Kind), attrSettleOutcome.String(r.Outcome),
		attrSettleStatements.Int(r.Statements), attrSettleElapsed.Float64(float64(r.Elapsed) / float64(time.Millisecond))}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	span.AddEvent(eventSettle, trace.WithAttributes(attrs...))
}

// settleErrorType is error.type of a failed settle call: "unsettleable" when the write
// cannot be mapped to cells (settle.ErrUnsettleable), else the retry error class of
// what failed (a read's timeout, the context ending, …).
func (in *Instrumentation) settleErrorType(err error) string {
	if errors.Is(err, settle.ErrUnsettleable) {
		return "unsettleable"
	}
	return in.driver.Classify(err).String()
}
