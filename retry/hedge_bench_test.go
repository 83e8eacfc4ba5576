package retry

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHedgeClientCost: the client's cost of hedging when nothing is wrong — the
// same write through a Policy with and without WithHedging, against the loopback fake
// server answering at once (no hedge is ever due: the delay is 250 ms), 64 goroutines.
// What it measures is the Go side alone: gocql's speculative execution path (a
// goroutine, a ticker, a cancellable context per execution) and the Policy's.
func BenchmarkHedgeClientCost(b *testing.B) {
	srv := startRV(&testing.T{}, func(int64) (time.Duration, bool) { return 0, false })
	defer srv.ln.Close()
	for _, hedged := range []bool{false, true} {
		name := "not hedged"
		opts := []Option{WithSchema(mapSchema{})}
		if hedged {
			name = "hedged"
			opts = append(opts, WithHedging(HedgeDelayBounds(250*time.Millisecond, 250*time.Millisecond)))
		}
		b.Run(name, func(b *testing.B) {
			sess := rvSession(&testing.T{}, srv)
			defer sess.Close()
			p := NewPolicy(opts...)
			var i atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(32)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := p.Exec(context.Background(), sess.Query(`INSERT INTO ks.t (id, v) VALUES (?, ?)`, i.Add(1), "v")); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
