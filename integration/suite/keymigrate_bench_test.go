package suite

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/keymigrate"
)

// fillComments writes n rows into comments_v1 (1000 rows per partition) with unlogged
// single-partition batches from 16 goroutines.
func fillComments(b *testing.B, s *gocql.Session, n int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				first := int(next.Add(100) - 100)
				if first >= n {
					return
				}
				batch := s.NewBatch(gocql.UnloggedBatch)
				for i := first; i < first+100 && i < n; i++ {
					batch.Query(`INSERT INTO comments_v1 (post_id, comment_key, author, body) VALUES (?, ?, 'author', 'a comment body of some length')`,
						fmt.Sprint("post-", i/1000), pad10(int64(i)))
				}
				if err := s.ExecuteBatch(batch); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkBackfillVsNaiveCopy copies the same table (KEYMIGRATE_ROWS rows, default
// 200,000) with Backfill and with a naive SELECT-then-INSERT copy, both 16 workers wide,
// and reports rows/s and the peak heap growth of the backfill. Run with -benchtime=1x.
func BenchmarkBackfillVsNaiveCopy(b *testing.B) {
	n := 200_000
	if v := envInt("KEYMIGRATE_ROWS"); v > 0 {
		n = v
	}
	s, ks := node.Keyspace(b)
	commentTables(b, s)
	fillComments(b, s, n)
	b.Run(fmt.Sprintf("backfill/rows=%d", n), func(b *testing.B) {
		for b.Loop() {
			s.Query(`TRUNCATE comments_v2`).Exec()
			m := newMigration(b, s, ks, toSortable)
			growth := heapPeak(func() {
				start := time.Now()
				prog, err := m.Backfill(context.Background(), keymigrate.WithConcurrency(32), keymigrate.WithoutDuplicateCheck())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(prog.Rows)/time.Since(start).Seconds(), "rows/s")
			})
			b.ReportMetric(float64(growth)/(1<<20), "heap-growth-MB")
		}
	})
	b.Run(fmt.Sprintf("naive_copy/rows=%d", n), func(b *testing.B) {
		for b.Loop() {
			s.Query(`TRUNCATE comments_v2`).Exec()
			start := time.Now()
			rows := make(chan [4]string, 1000)
			var copied atomic.Int64
			var wg sync.WaitGroup
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rows {
						if err := s.Query(`INSERT INTO comments_v2 (post_id, comment_key, author, body) VALUES (?, ?, ?, ?)`, r[0], r[1], r[2], r[3]).Exec(); err != nil {
							b.Error(err)
						}
						copied.Add(1)
					}
				}()
			}
			iter := s.Query(`SELECT post_id, comment_key, author, body FROM comments_v1`).PageSize(1000).Iter()
			var r [4]string
			for iter.Scan(&r[0], &r[1], &r[2], &r[3]) {
				tk, _ := toSortable(map[string]any{"post_id": r[0], "comment_key": r[1]})
				r[1] = tk["comment_key"].(string)
				rows <- r
			}
			close(rows)
			wg.Wait()
			if err := iter.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(copied.Load())/time.Since(start).Seconds(), "rows/s")
		}
	})
}

// heapPeak runs f and returns the peak heap growth sampled every 20 ms.
func heapPeak(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}
