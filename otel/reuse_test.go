package cqlsafeotel_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cqlsafe/cqlsafe/internal/core/fakecql"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestOtelReusedQueryAttemptNumbers: the Policy runs a WithContext copy of the
// caller's query, and gocql v1.7's copies share the original's attempt count, so a
// *gocql.Query executed twice through Policy.Exec is reported by the driver as attempt
// 1 (0-based) in its second execution. The span numbers its own attempts: one attempt,
// cqlsafe.attempt = 1 (it said 2 before attempts were numbered per execution).
func TestOtelReusedQueryAttemptNumbers(t *testing.T) {
	f := fakecql.Start(t, nil)
	spans := tracetest.NewSpanRecorder()
	in, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	if err != nil {
		t.Fatal(err)
	}
	s := fakeSession(t, f, in)
	p := retry.NewPolicy(retry.WithTracer(in))
	q := s.Query(fakeInsert, 1, "x")
	for i := 0; i < 2; i++ {
		if err := p.Exec(context.Background(), q.Bind(i, "x")); err != nil {
			t.Fatal(err)
		}
	}
	for i, sp := range spans.Ended() {
		evs := sp.Events()
		if len(evs) != 1 {
			t.Fatalf("execution %d: %d events", i, len(evs))
		}
		if got := attrsOf(evs[0].Attributes)["cqlsafe.attempt"].AsInt64(); got != 1 {
			t.Errorf("execution %d (one attempt): cqlsafe.attempt = %d, want 1", i, got)
		}
	}
}
