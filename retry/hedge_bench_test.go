package retry

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHedgeClientCost: the client's cost of hedging when nothing is wrong — the
// same write through a Policy with and without WithHedging, against the loopback fake
// server answering at once (no hedge is ever due: the delay is 250 ms), 32 goroutines
// per CPU. What it measures is the Go side alone: the Policy's hedging path (a
// cancellable context, a timer, the host bookkeeping per execution).
func BenchmarkHedgeClientCost(b *testing.B) {
	srv := startRV(b, func(int64) (time.Duration, bool) { return 0, false })
	for _, hedged := range []bool{false, true} {
		name := "not hedged"
		opts := []Option{WithSchema(mapSchema{})}
		if hedged {
			name = "hedged"
			opts = append(opts, WithHedging(HedgeDelayBounds(250*time.Millisecond, 250*time.Millisecond)))
		}
		b.Run(name, func(b *testing.B) {
			sess := rvSession(b, srv)
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
