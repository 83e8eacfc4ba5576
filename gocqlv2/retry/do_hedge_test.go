package retry

import (
	"context"
	"errors"
	"testing"
)

// TestDoRefusesHedgingPerCall: Do given WithHedging itself refuses before fn runs (a
// budget per call bounds nothing); under a Policy that hedges, p.Do and Do with
// WithPolicy(p) run fn. (The shared budget is measured on gocql v1.7's fake server:
// retry.TestDoDrawsOnPolicyHedgeBudget; engine.Do is the same code.)
func TestDoRefusesHedgingPerCall(t *testing.T) {
	ctx := context.Background()
	called := 0
	fn := func(context.Context) error { called++; return nil }
	if err := Do(ctx, fn, WithHedging()); !errors.Is(err, ErrDoHedging) || called != 0 {
		t.Fatalf("Do with WithHedging: %v, fn called %d times; want ErrDoHedging before fn", err, called)
	}
	p := NewPolicy(WithHedging())
	if err := p.Do(ctx, fn); err != nil || called != 1 {
		t.Fatalf("p.Do: %v, fn called %d times", err, called)
	}
	if err := Do(ctx, fn, WithPolicy(p)); err != nil || called != 2 {
		t.Fatalf("Do with WithPolicy(p): %v, fn called %d times", err, called)
	}
	var nilp *Policy
	if err := nilp.Do(ctx, fn); err == nil || called != 2 {
		t.Fatalf("nil Policy: %v, fn called %d times", err, called)
	}
}
