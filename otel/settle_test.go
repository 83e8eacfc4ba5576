package cqlsafeotel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/cqlsafe/cqlsafe/integration/otelrec"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
)

// TestOtelSettleResults: the Instrumentation, as a settle.Observer, counts settle calls
// in cqlsafe.settle.results by kind and outcome, with error.type when the call failed
// ("unsettleable" for settle.ErrUnsettleable), and adds a "settle" event to the span in
// the call's context when it records. A real call (settle.Write with no session, which
// fails before reading) reaches it through settle.WithObserver.
func TestOtelSettleResults(t *testing.T) {
	rec := newRecorded(t)
	ctx, span := rec.TP.Tracer("app").Start(context.Background(), "app.Repair")
	rec.inst.Settled(ctx, settle.Report{Kind: settle.KindLWT, Outcome: "applied", Statements: 1, Elapsed: 3 * time.Millisecond})
	rec.inst.Settled(ctx, settle.Report{Kind: settle.KindWrite, Outcome: "unsettleable", Statements: 1,
		Err: fmt.Errorf("wrapped: %w", &settle.UnsettleableError{CQL: "DELETE FROM kv WHERE id = ?", Reason: "tombstones"})})
	_, err := settle.Write(ctx, nil, &retry.OutcomeUnknownError{}, settle.WithObserver(rec.inst))
	if err == nil {
		t.Fatal("settle.Write without a session: no error")
	}
	span.End()
	// Not recording: counted, no event.
	rec.inst.Settled(context.Background(), settle.Report{Kind: settle.KindWrite, Outcome: "landed", Statements: 2})

	kind := func(k string) attribute.KeyValue { return attribute.String("cqlsafe.settle.kind", k) }
	outcome := func(o string) attribute.KeyValue { return attribute.String("cqlsafe.settle.outcome", o) }
	for _, c := range []struct {
		want  int64
		attrs []attribute.KeyValue
	}{
		{4, nil},
		{1, []attribute.KeyValue{kind("lwt"), outcome("applied")}},
		{1, []attribute.KeyValue{kind("write"), outcome("landed")}},
		{1, []attribute.KeyValue{kind("write"), outcome("unsettleable"), attribute.String("error.type", "unsettleable")}},
		{1, []attribute.KeyValue{kind("write"), outcome("unsettleable"), attribute.String("error.type", "fatal")}},
		{4, []attribute.KeyValue{attribute.String("db.system.name", "cassandra")}},
	} {
		if got := rec.Sum(t, "cqlsafe.settle.results", c.attrs...); got != c.want {
			t.Errorf("cqlsafe.settle.results%v = %d, want %d: %v", c.attrs, got, c.want, rec.Points(t, "cqlsafe.settle.results"))
		}
	}
	if got := rec.Sum(t, "cqlsafe.settle.results", kind("lwt"), outcome("applied"), attribute.String("error.type", "fatal")); got != 0 {
		t.Errorf("a success counted with error.type")
	}

	spans := rec.Spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	evs := spans[0].Events()
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3: %v", len(evs), evs)
	}
	first := otelrec.Attrs(evs[0].Attributes)
	if evs[0].Name != "settle" || first["cqlsafe.settle.kind"].AsString() != "lwt" || first["cqlsafe.settle.outcome"].AsString() != "applied" ||
		first["cqlsafe.settle.statements"].AsInt64() != 1 || first["cqlsafe.settle.elapsed_ms"].AsFloat64() != 3 {
		t.Errorf("first event %s %v", evs[0].Name, evs[0].Attributes)
	}
	if _, ok := first["error.type"]; ok {
		t.Errorf("error.type on a success: %v", evs[0].Attributes)
	}
	if got := otelrec.Attrs(evs[1].Attributes)["error.type"].AsString(); got != "unsettleable" {
		t.Errorf("second event error.type %q, want unsettleable", got)
	}
	last := otelrec.Attrs(evs[2].Attributes)
	if last["cqlsafe.settle.kind"].AsString() != "write" || last["error.type"].AsString() != "fatal" ||
		last["cqlsafe.settle.statements"].AsInt64() != 0 {
		t.Errorf("settle.Write's event %v", evs[2].Attributes)
	}

	// A nil Instrumentation and a nil context are fine.
	var nilIn *cqlsafeotel.Instrumentation
	nilIn.Settled(context.Background(), settle.Report{})
	//lint:ignore SA1012 a nil context on purpose
	rec.inst.Settled(nil, settle.Report{Kind: settle.KindWrite, Outcome: "landed"})
}
