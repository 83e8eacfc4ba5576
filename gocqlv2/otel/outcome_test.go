package cqlsafeotel_test

import (
	"context"
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	cqlsafeotel "github.com/cqlsafe/cqlsafe/gocqlv2/otel"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
)

// TestOtelV2OutcomeUnknownSentinelOnly is otel's TestOtelOutcomeUnknownSentinelOnly on
// the v2 adapter: outcome "unknown" only for an error holding the v2 retry package's
// *OutcomeUnknownError (Driver.OutcomeUnknown); an error that only wraps the sentinel
// retry.ErrOutcomeUnknown is "failed", and one holding the error is "unknown".
func TestOtelV2OutcomeUnknownSentinelOnly(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	in, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	if err != nil {
		t.Fatal(err)
	}
	p := retry.NewPolicy(retry.WithTracer(in))
	for _, e := range []error{fmt.Errorf("app: %w", retry.ErrOutcomeUnknown), fmt.Errorf("app: %w", &retry.OutcomeUnknownError{})} {
		if err := retry.Do(context.Background(), func(context.Context) error { return e }, retry.WithPolicy(p)); err == nil {
			t.Fatal("Do succeeded")
		}
	}
	ended := spans.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans, want 2", len(ended))
	}
	for i, want := range []string{"failed", "unknown"} {
		var got string
		for _, kv := range ended[i].Attributes() {
			if kv.Key == "cqlsafe.outcome" {
				got = kv.Value.AsString()
			}
		}
		if got != want {
			t.Errorf("execution %d: cqlsafe.outcome = %q, want %q", i, got, want)
		}
	}
}
