package clientid

import (
	"math"
	"sync"
	"testing"
	"time"
)

// TestClientidClockObserveConcurrent: Observe racing Reserve never makes two callers share
// a value, and a goroutine's Reserve after its own Observe(ts) is above ts.
func TestClientidClockObserveConcurrent(t *testing.T) {
	wall := time.UnixMicro(1_000_000)
	c := NewClockFunc(func() time.Time { return wall })
	const goroutines, per = 8, 4000
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := range per {
				if i%5 == 0 {
					ts := c.Last() + int64(i%7) // at, just above or below the last value
					c.Observe(ts)
					n := c.Reserve(2)
					if n <= ts {
						t.Errorf("Reserve(2) = %d after Observe(%d)", n, ts)
						return
					}
					got[g] = append(got[g], n, n+1)
					continue
				}
				got[g] = append(got[g], c.Next())
			}
		}(g)
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, vs := range got {
		for _, v := range vs {
			if seen[v] {
				t.Fatalf("value %d handed out twice", v)
			}
			seen[v] = true
		}
	}
}

// TestClientidClockObserveBounded: a timestamp more than MaxObserveAhead ahead of the
// wall clock — a WRITETIME in nanoseconds, MaxInt64 — is ignored: the clock stays near
// the wall clock and keeps increasing (it once wrapped to MinInt64, or followed to the
// year 55840).
func TestClientidClockObserveBounded(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := NewClockFunc(func() time.Time { return now })
	first := c.Next()
	for _, ts := range []int64{now.UnixNano(), math.MaxInt64, math.MaxInt64 - 1} {
		c.Observe(ts)
	}
	n, m := c.Next(), c.Reserve(2)
	if n <= first || m <= n || m+1 <= m {
		t.Errorf("after far-future Observes: %d, %d, %d (first %d): not increasing", n, m, m+1, first)
	}
	if d := c.Drift(); d > time.Second {
		t.Errorf("the clock follows a far-future timestamp: %v ahead", d)
	}
	within := now.Add(MaxObserveAhead - time.Minute).UnixMicro()
	c.Observe(within)
	if c.Next() <= within {
		t.Errorf("a timestamp within MaxObserveAhead was not followed")
	}
}
