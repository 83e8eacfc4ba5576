package keymigrate

import (
	"context"
	"math"
	"testing"
	"time"
)

func TestTokenRangesCoverTheRing(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 256} {
		prevHi := int64(math.MinInt64)
		for r := 0; r < n; r++ {
			lo, hi := tokenRange(r, n)
			if lo != prevHi || hi <= lo {
				t.Fatalf("n=%d range %d: (%d, %d] after %d", n, r, lo, hi, prevHi)
			}
			prevHi = hi
		}
		if prevHi != math.MaxInt64 {
			t.Fatalf("n=%d: ring ends at %d", n, prevHi)
		}
	}
}

func TestLimiter(t *testing.T) {
	l := newLimiter(1000)
	start := time.Now()
	for i := 0; i < 50; i++ {
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("50 waits at 1000/s took %v", d)
	}
	var none *limiter
	if err := none.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slow := newLimiter(0.001)
	slow.wait(ctx)
	if err := slow.wait(ctx); err == nil {
		t.Fatal("wait ignored a cancelled context")
	}
}

func TestOptionsRejectBadValues(t *testing.T) {
	for _, o := range []BackfillOption{WithRanges(0), WithConcurrency(0), WithPageSize(0), WithThrottle(0)} {
		c := backfillDefaults()
		if err := o(&c); err == nil {
			t.Error("bad option accepted")
		}
	}
	if _, err := New(nil, "id", nil, nil, nil); err == nil {
		t.Error("nil session accepted")
	}
}
