package clientid

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestClientidClockStrictlyIncreasing(t *testing.T) {
	c := NewClock()
	prev := c.Next()
	for i := 0; i < 100_000; i++ {
		n := c.Next()
		if n <= prev {
			t.Fatalf("Next() = %d after %d", n, prev)
		}
		prev = n
	}
	if now := time.Now().UnixMicro(); prev > now+100_000+1_000_000 {
		t.Fatalf("clock ran far ahead of wall time: %d vs %d", prev, now)
	}
}

func TestClientidClockZeroValue(t *testing.T) {
	var c Clock
	a, b := c.Next(), c.Next()
	if b <= a || a < time.Now().Add(-time.Minute).UnixMicro() {
		t.Fatalf("zero Clock gave %d, %d", a, b)
	}
}

func TestClientidClockReserve(t *testing.T) {
	c := NewClockFunc(func() time.Time { return time.UnixMicro(1000) })
	if got := c.Reserve(2); got != 1000 {
		t.Fatalf("Reserve(2) = %d, want 1000", got)
	}
	if got := c.Next(); got != 1002 {
		t.Fatalf("Next after Reserve(2) = %d, want 1002 (1001 is reserved)", got)
	}
	for _, n := range []int{0, -5} {
		before := c.Last()
		got := c.Reserve(n)
		if got != before+1 || c.Last() != got {
			t.Fatalf("Reserve(%d) = %d (last %d), want one value %d", n, got, c.Last(), before+1)
		}
	}
}

func TestClientidClockWallClockStepsBack(t *testing.T) {
	var wall atomic.Int64
	wall.Store(5_000_000)
	c := NewClockFunc(func() time.Time { return time.UnixMicro(wall.Load()) })
	first := c.Next()
	wall.Store(2_000_000) // NTP steps the clock back 3 s
	second := c.Next()
	if second != first+1 {
		t.Fatalf("after step back Next() = %d, want %d", second, first+1)
	}
	if d := c.Drift(); d < 2900*time.Millisecond || d > 3100*time.Millisecond {
		t.Fatalf("Drift() = %v, want about 3s", d)
	}
	wall.Store(9_000_000) // the wall clock catches up
	if got := c.Next(); got != 9_000_000 {
		t.Fatalf("after catching up Next() = %d, want wall time 9000000", got)
	}
	if d := c.Drift(); d != 0 {
		t.Fatalf("Drift() = %v after catching up, want 0", d)
	}
}

// TestClockConcurrent: values from many goroutines, with and without Reserve, never
// collide. Run with -race.
func TestClientidClockConcurrent(t *testing.T) {
	c := NewClock()
	const goroutines, per = 8, 5000
	results := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if i%3 == 0 {
					n := c.Reserve(2)
					results[g] = append(results[g], n, n+1)
				} else {
					results[g] = append(results[g], c.Next())
				}
			}
		}(g)
	}
	wg.Wait()
	seen := make(map[int64]bool, goroutines*per*2)
	for g, vs := range results {
		for i, v := range vs {
			if seen[v] {
				t.Fatalf("value %d handed out twice", v)
			}
			seen[v] = true
			if i > 0 && i%3 != 2 && v <= vs[i-1] { // within one goroutine: increasing
				t.Fatalf("goroutine %d: %d after %d", g, v, vs[i-1])
			}
		}
	}
}

func BenchmarkClockNext(b *testing.B) {
	c := NewClock()
	b.ReportAllocs()
	for b.Loop() {
		c.Next()
	}
}

func BenchmarkClockNextParallel8(b *testing.B) {
	c := NewClock()
	b.ReportAllocs()
	b.SetParallelism(8 / max(1, runtimeGOMAXPROCS()))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Next()
		}
	})
}

// BenchmarkMonotonicRead is the floor under Clock.Next: one monotonic clock read.
func BenchmarkMonotonicRead(b *testing.B) {
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		_ = time.Since(start)
	}
}

// BenchmarkTimeNow is what a naive clock pays: time.Now reads two clocks.
func BenchmarkTimeNow(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = time.Now().UnixMicro()
	}
}

// TestClientidClockObserve: after Observe(ts) every value is above ts, even from a
// wall clock far behind it; an older ts changes nothing.
func TestClientidClockObserve(t *testing.T) {
	wall := time.Unix(1_000, 0)
	c := NewClockFunc(func() time.Time { return wall })
	first := c.Next()
	ahead := first + 2_000_000 // another instance's clock, 2 s ahead
	c.Observe(ahead)
	if n := c.Next(); n <= ahead {
		t.Fatalf("Next() = %d after Observe(%d)", n, ahead)
	}
	if d := c.Drift(); d < 2*time.Second {
		t.Errorf("Drift() = %v, want at least the 2 s observed ahead", d)
	}
	before := c.Last()
	c.Observe(first)
	if c.Last() != before {
		t.Errorf("Observe of an older timestamp moved the clock from %d to %d", before, c.Last())
	}
}
