package cqlsafeotel_test

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/cqlsafe/cqlsafe/integration/otelrec"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestOtelOutcomeUnknownSentinelOnly: an execution's outcome is "unknown" only for an
// error holding a *retry.OutcomeUnknownError (Driver.OutcomeUnknown, errors.As); an
// error that only wraps the sentinel retry.ErrOutcomeUnknown — what a function run by
// retry.Do may return — is "failed" and not counted in cqlsafe.outcome_unknown.
func TestOtelOutcomeUnknownSentinelOnly(t *testing.T) {
	rec := newRecorded(t)
	p := retry.NewPolicy(retry.WithTracer(rec.inst))
	sentinelOnly := fmt.Errorf("app: %w", retry.ErrOutcomeUnknown)
	err := retry.Do(context.Background(), func(context.Context) error { return sentinelOnly }, retry.WithPolicy(p))
	if err == nil {
		t.Fatal("Do succeeded")
	}
	spans := rec.Spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	if got := otelrec.Attrs(spans[0].Attributes())["cqlsafe.outcome"].AsString(); got != "failed" {
		t.Errorf("cqlsafe.outcome = %q, want \"failed\" (the error holds no *retry.OutcomeUnknownError)", got)
	}
	if got := rec.Sum(t, "cqlsafe.outcome_unknown", attribute.String("cqlsafe.operation", "retry.Do")); got != 0 {
		t.Errorf("cqlsafe.outcome_unknown = %d, want 0", got)
	}
}
