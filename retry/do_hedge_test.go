package retry

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestDoDrawsOnPolicyHedgeBudget: every request answers in 20 ms and the hedge delay is
// 5 ms, so every hedge is sent and loses. 300 Do calls of one write each, one after the
// other, under one Policy (p.Do, and Do with WithPolicy(p)) draw on its one budget: at
// most 50 + 50 in debt + 0.05 × 300 = 115 hedges, not one budget per call (300). Do given
// WithHedging itself refuses before fn runs (ErrDoHedging).
func TestDoDrawsOnPolicyHedgeBudget(t *testing.T) {
	var on atomic.Bool
	srv := startRV(t, func(int64) (time.Duration, bool) {
		if on.Load() {
			return 20 * time.Millisecond, false
		}
		return 0, false
	})
	sess := rvSession(t, srv)
	const insert = `INSERT INTO ks.t (id, v) VALUES (?, ?)`
	if err := sess.Query(insert, 0, "v").Exec(); err != nil { // prepare
		t.Fatal(err)
	}
	hedging := WithHedging(HedgeDelayBounds(5*time.Millisecond, 5*time.Millisecond))
	tracer := &wonTracer{}
	p := NewPolicy(hedging, WithTracer(tracer), WithSchema(mapSchema{}))
	ctx := context.Background()

	called := false
	err := Do(ctx, func(ctx context.Context) error { called = true; return nil }, hedging, WithSchema(mapSchema{}))
	if !errors.Is(err, ErrDoHedging) || called {
		t.Fatalf("Do with WithHedging: %v, fn called %v; want ErrDoHedging before fn", err, called)
	}

	before := srv.n.Load()
	on.Store(true)
	const n = 300
	for i := 1; i <= n; i++ {
		fn := func(ctx context.Context) error { return Exec(ctx, sess.Query(insert, i, "v")) }
		if i%2 == 0 {
			err = p.Do(ctx, fn)
		} else {
			err = Do(ctx, fn, WithPolicy(p))
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	on.Store(false)
	hedges := srv.n.Load() - before - n
	won := tracer.won.Load()
	t.Logf("%d Do calls: %d hedges, %d won", n, hedges, won)
	if hedges > 115+won {
		t.Errorf("%d hedges sent (%d won): want at most 115 + won — one budget for the Policy, not one per Do call", hedges, won)
	}
	if hedges < 50 {
		t.Errorf("%d hedges: the budget starts with 50, and every hedge here is sent", hedges)
	}
}

// TestDoNilPolicy: a nil Policy is an error, not a panic.
func TestDoNilPolicy(t *testing.T) {
	var p *Policy
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); err == nil {
		t.Fatal("nil Policy: no error")
	}
}
