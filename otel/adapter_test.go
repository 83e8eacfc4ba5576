package cqlsafeotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/cqlsafe/cqlsafe/integration/otelrec"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
)

// TestOtelAdapterEdges: what the gocql v1.7 adapter adds over the shared core: a nil
// Instrumentation's observers still call next; an attempt gocql reports with a nil
// *HostInfo is recorded without server.address (the adapter must not box the nil
// pointer: the core would call ConnectAddressAndPort on it); ObserveClockOffset
// refuses a nil Policy and a nil Instrumentation.
func TestOtelAdapterEdges(t *testing.T) {
	var nilIn *cqlsafeotel.Instrumentation
	next := &countingObserver{}
	nilIn.QueryObserver(next).ObserveQuery(context.Background(), gocql.ObservedQuery{})
	nilIn.BatchObserver(next).ObserveBatch(context.Background(), gocql.ObservedBatch{})
	if next.queries.Load() != 1 || next.batches.Load() != 1 {
		t.Errorf("chained observer saw %d queries, %d batches; want 1, 1", next.queries.Load(), next.batches.Load())
	}
	nilIn.Settled(context.Background(), settle.Report{Kind: settle.KindWrite})
	if _, err := nilIn.ObserveClockOffset(retry.NewPolicy()); err == nil {
		t.Error("nil Instrumentation: ObserveClockOffset gave no error")
	}

	rec := newRecorded(t)
	if _, err := rec.inst.ObserveClockOffset(nil); err == nil {
		t.Error("nil Policy accepted")
	}
	const stmt = "INSERT INTO kv (id, v) VALUES (?, ?)"
	ctx, tr := rec.inst.Begin(context.Background(), retry.Execution{Operation: "op", Statement: stmt, Timestamp: 1, Idempotent: true})
	now := time.Now()
	var noHost *gocql.HostInfo
	rec.inst.QueryObserver(nil).ObserveQuery(ctx, gocql.ObservedQuery{Statement: stmt, Host: noHost, Start: now, End: now})
	// A batch attempt in a query's execution is not one of its attempts.
	rec.inst.BatchObserver(nil).ObserveBatch(ctx, gocql.ObservedBatch{Statements: []string{stmt}, Host: noHost, Start: now, End: now})
	tr.End(nil, 1)
	spans := rec.Spans.Ended()
	if len(spans) != 1 || len(spans[0].Events()) != 1 {
		t.Fatalf("spans %v", otelrec.SpanNames(spans))
	}
	if e := otelrec.Attrs(spans[0].Events()[0].Attributes); e["server.address"].Type() != attribute.EMPTY || e["cqlsafe.attempt"].AsInt64() != 1 {
		t.Errorf("attempt without a host: %v", spans[0].Events()[0].Attributes)
	}
}

// TestOtelScope: the gocql v1.7 adapter's spans and metrics keep the scope they had
// before the instrumentation was shared (dashboards select on it).
func TestOtelScope(t *testing.T) {
	rec := newRecorded(t)
	p := retry.NewPolicy(retry.WithTracer(rec.inst))
	if err := retry.Do(context.Background(), func(context.Context) error { return nil }, retry.WithPolicy(p)); err != nil {
		t.Fatal(err)
	}
	const want = "github.com/cqlsafe/cqlsafe/otel"
	if cqlsafeotel.ScopeName != want {
		t.Errorf("ScopeName = %q, want %q", cqlsafeotel.ScopeName, want)
	}
	for _, sp := range rec.Spans.Ended() {
		if sp.InstrumentationScope().Name != want {
			t.Errorf("span scope %q, want %q", sp.InstrumentationScope().Name, want)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := rec.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) == 0 {
		t.Fatal("no metrics")
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != want {
			t.Errorf("metric scope %q, want %q", sm.Scope.Name, want)
		}
	}
}
