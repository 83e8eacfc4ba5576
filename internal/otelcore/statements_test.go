package otelcore

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// The statement cache shares what executions of one statement have in common, and
// nothing else: each span still has its own timestamp and, when not idempotent, its
// own reasons.
func TestOtelStatementCache(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	// With the query text: the verdict's reasons quote it, and are recorded only then.
	in, err := New(testDriver, WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))), WithQueryText(true))
	if err != nil {
		t.Fatal(err)
	}
	const stmt = "UPDATE kv SET l = l + ? WHERE id = ?"
	for _, x := range []engine.Execution{
		{Operation: "retry.Exec", Keyspace: "ks", Statement: stmt, Timestamp: 11, Idempotent: true},
		{Operation: "retry.Exec", Keyspace: "ks", Statement: stmt, Timestamp: 12, Idempotent: true},
		{Operation: "retry.Exec", Keyspace: "ks", Statement: stmt, Timestamp: 13, Reasons: []string{"list append"}},
		{Operation: "retry.Exec", Keyspace: "ks", Statement: stmt, Timestamp: 14, Reasons: []string{"counter update"}},
		{Operation: "my.Op", Keyspace: "other", Statement: stmt, Idempotent: true},
	} {
		_, tr := in.Begin(context.Background(), x)
		tr.End(nil, 1)
	}
	if m := in.stmts.m.Load(); m == nil || len(*m) != 2 {
		t.Error("want the two idempotent statements cached, the others not")
	}
	ended := spans.Ended()
	if len(ended) != 5 {
		t.Fatalf("%d spans", len(ended))
	}
	want := []struct {
		name, ns  string
		ts        int64
		idem      bool
		reasons   string
		hasReason bool
	}{
		{"retry.Exec", "ks", 11, true, "", false},
		{"retry.Exec", "ks", 12, true, "", false},
		{"retry.Exec", "ks", 13, false, "list append", true},
		{"retry.Exec", "ks", 14, false, "counter update", true},
		{"my.Op", "other", 0, true, "", false},
	}
	for i, sp := range ended {
		a := map[attribute.Key]attribute.Value{}
		for _, kv := range sp.Attributes() {
			a[kv.Key] = kv.Value
		}
		w := want[i]
		ts, hasTS := a[attrTimestamp]
		r, hasR := a[attrReasons]
		if sp.Name() != w.name || a["db.namespace"].AsString() != w.ns || a["db.operation.name"].AsString() != "UPDATE" ||
			a[attrIdempotent].AsBool() != w.idem || hasTS != (w.ts != 0) || ts.AsInt64() != w.ts ||
			hasR != w.hasReason || (hasR && r.AsStringSlice()[0] != w.reasons) || a[attrOutcome].AsString() != outcomeOK {
			t.Errorf("span %d: %s %v", i, sp.Name(), sp.Attributes())
		}
	}
}
