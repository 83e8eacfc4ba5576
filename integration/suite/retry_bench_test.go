package suite

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/retry"
)

// BenchmarkRetryDroppedResponses writes 10,000 events (client-made TimeUUID keys)
// through the retry policy twice per op: once fault-free, once with 10% of the write
// responses dropped after the server applied them. It reports both rates, their ratio,
// and rows lost and duplicated (checked by reading every row back with WRITETIME).
// Run with -benchtime=1x.
func BenchmarkRetryDroppedResponses(b *testing.B) {
	s0, ks := node.Keyspace(b)
	harness.Exec(b, s0, `CREATE TABLE ev (p int, id timeuuid, v int, PRIMARY KEY (p, id))`)
	s, px := proxied(b, ks, 250*time.Millisecond)
	const n, workers = 10_000, 64
	p := retry.NewPolicy(retry.WithMaxAttempts(10), retry.WithBackoff(2*time.Millisecond, 50*time.Millisecond))

	run := func(part int, fraction float64) (rate float64, lost, dup int, retries int64) {
		if fraction > 0 {
			px.SetRule(faultproxy.DropFraction(fraction, uint64(part), faultproxy.Writes("INSERT INTO ev")))
		} else {
			px.SetRule(nil)
		}
		ids := make([]gocql.UUID, n)
		ts := make([]int64, n)
		base := time.Now()
		for i := range ids {
			ids[i] = clientid.NewTimeUUID(base.Add(time.Duration(i) * time.Microsecond))
		}
		var next atomic.Int64
		var failed atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					ts[i] = p.Clock().Next()
					if err := p.Exec(context.Background(), s.Query(`INSERT INTO ev (p, id, v) VALUES (?, ?, ?)`, part, ids[i], i), retry.AtTimestamp(ts[i])); err != nil {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		rate = float64(n) / time.Since(start).Seconds()
		px.SetRule(nil)
		want := make(map[gocql.UUID]int, n)
		for i, id := range ids {
			want[id] = i
		}
		seen := map[gocql.UUID]bool{}
		iter := s0.Query(`SELECT id, v, WRITETIME(v) FROM ev WHERE p = ?`, part).PageSize(5000).Iter()
		var id gocql.UUID
		var v int
		var wt int64
		for iter.Scan(&id, &v, &wt) {
			i, ok := want[id]
			if !ok || seen[id] || v != i || wt != ts[i] {
				dup++
			}
			seen[id] = true
		}
		if err := iter.Close(); err != nil {
			b.Fatal(err)
		}
		lost = n - len(seen)
		return rate, lost, dup, px.Stats().Dropped.Load()
	}

	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		cleanRate, cleanLost, cleanDup, _ := run(2*i, 0)
		before := px.Stats().Dropped.Load()
		faultRate, lost, dup, dropped := run(2*i+1, 0.10)
		b.ReportMetric(cleanRate, "writes/s-clean")
		b.ReportMetric(faultRate, "writes/s-10pct-dropped")
		b.ReportMetric(faultRate/cleanRate, "throughput-ratio")
		b.ReportMetric(float64(lost+cleanLost), "lost")
		b.ReportMetric(float64(dup+cleanDup), "duplicated-or-wrong")
		b.ReportMetric(float64(dropped-before), "responses-dropped")
		if lost+dup+cleanLost+cleanDup != 0 {
			b.Fatalf("lost %d, duplicated or wrong %d", lost+cleanLost, dup+cleanDup)
		}
	}
}
