package clientid

// Review of Clock.Observe (commit 24681a0).

import (
	"math"
	"sync"
	"testing"
	"time"
)

// TestReviewClockObserveConcurrent: Observe racing Reserve never makes two callers share
// a value, and a goroutine's Reserve after its own Observe(ts) is above ts. (Holds.)
func TestReviewClockObserveConcurrent(t *testing.T) {
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

// TestReviewClockObserveOverflow: Observe takes any int64 a WRITETIME holds. Cassandra
// accepts USING TIMESTAMP up to math.MaxInt64 (a known "never overwritten" trick); once
// such a cell is read (tombstone readRow), the Clock's last+1 overflows: Reserve hands out
// math.MinInt64 — a negative write timestamp — and the values after it fall back to the
// wall clock, below the observed timestamp, breaking both Next's promise ("greater than
// every value this Clock returned before") and Observe's ("every later value is above ts").
func TestReviewClockObserveOverflow(t *testing.T) {
	c := NewClockFunc(func() time.Time { return time.UnixMicro(1_700_000_000_000_000) })
	first := c.Next()
	c.Observe(math.MaxInt64)
	n := c.Next()
	m := c.Next()
	if n <= first || m <= n {
		t.Errorf("after Observe(MaxInt64): Next() = %d then %d (first was %d): not increasing", n, m, first)
	}
	if m > 0 && m < math.MaxInt64 {
		t.Errorf("after Observe(MaxInt64): a later Next() = %d is below the observed timestamp", m)
	}
	c2 := NewClockFunc(func() time.Time { return time.UnixMicro(1_700_000_000_000_000) })
	c2.Observe(math.MaxInt64 - 1)
	if r := c2.Reserve(2); r+1 < r {
		t.Errorf("Reserve(2) after Observe(MaxInt64-1) = %d: its second value overflows to %d", r, r+1)
	}
}

// TestReviewClockObserveUnbounded: a WRITETIME written by a client that stamps
// nanoseconds (or milliseconds ×1000 twice) moves the process clock thousands of years
// ahead, and with it every later write of every cqlsafe package sharing ProcessClock:
// those writes can then never be overwritten or deleted by processes with sane clocks.
// Observe has no bound on how far ahead of the wall clock it follows a timestamp (HLCs
// usually reject or cap a remote time beyond a maximum offset).
func TestReviewClockObserveUnbounded(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := NewClockFunc(func() time.Time { return now })
	c.Observe(now.UnixNano()) // a nanosecond WRITETIME, read as µs
	if d := c.Drift(); d > 24*time.Hour {
		t.Errorf("after observing one nanosecond-scaled WRITETIME the clock runs %v ahead (next write stamped in year %d)",
			d, time.UnixMicro(c.Next()).Year())
	}
}
