package suite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
)

// BenchmarkOverwriteVsRawInsert: overwrite.Row of a 40-column row with 20 columns given,
// against a raw gocql prepared INSERT of the same 20 non-null columns, same node, same
// concurrency (RunParallel, GOMAXPROCS×8 goroutines). ns/op is per row written; allocs
// are the client's.
func BenchmarkOverwriteVsRawInsert(b *testing.B) {
	s, ks := node.Keyspace(b)
	wideTable(b, s)
	tbl := describe(b, s, ks, "t40")
	ctx := context.Background()
	cols := []string{"id", "seq"}
	for i := 1; i <= 20; i++ {
		cols = append(cols, fmt.Sprintf("c%02d", i))
	}
	rawCQL := fmt.Sprintf(`INSERT INTO t40 (%s) VALUES (%s)`, strings.Join(cols, ", "), strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
	var seq sync.Map
	next := func(name string) int {
		v, _ := seq.LoadOrStore(name, new(int64))
		p := v.(*int64)
		mu.Lock()
		defer mu.Unlock()
		*p++
		return int(*p)
	}
	b.Run("raw_insert", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			vals := make([]any, len(cols))
			for i := 2; i < len(cols); i++ {
				vals[i] = fmt.Sprintf("value %d", i)
			}
			for pb.Next() {
				vals[0], vals[1] = 1, next("raw")
				if err := s.Query(rawCQL, vals...).Exec(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("overwrite_row", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			row := wideRow(2, 0, 20)
			for k, v := range row {
				if v == nil {
					delete(row, k)
				}
			}
			for pb.Next() {
				row["seq"] = next("ow")
				if _, err := overwrite.Row(ctx, s, tbl, row); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

var mu sync.Mutex

// BenchmarkReadAfterOverwrites: a partition of K clustered rows, each written once with
// 20 of 40 columns NULL — naively (NULL bound) or with overwrite.Row — then flushed and
// read whole 50 times. Reports tombstone cells per read (from Cassandra's trace) and read
// latency p50/p99. Run with -benchtime=1x.
func BenchmarkReadAfterOverwrites(b *testing.B) {
	s, ks := node.Keyspace(b)
	wideTable(b, s)
	tbl := describe(b, s, ks, "t40")
	ctx := context.Background()
	for _, k := range []int{10, 100, 1000, 4000} {
		for _, variant := range []string{"naive", "overwrite"} {
			b.Run(fmt.Sprintf("rows=%d/%s", k, variant), func(b *testing.B) {
				for b.Loop() {
					id := k*10 + map[string]int{"naive": 1, "overwrite": 2}[variant]
					var wg sync.WaitGroup
					sem := make(chan struct{}, 32)
					for i := 0; i < k; i++ {
						wg.Add(1)
						sem <- struct{}{}
						go func(i int) {
							defer wg.Done()
							defer func() { <-sem }()
							var err error
							if variant == "naive" {
								err = naiveInsert(s, wideRow(id, i, 20))
							} else {
								_, err = overwrite.Row(ctx, s, tbl, wideRow(id, i, 20))
							}
							if err != nil {
								b.Error(err)
							}
						}(i)
					}
					wg.Wait()
					if err := node.Flush(ctx, ks, "t40"); err != nil {
						b.Fatal(err)
					}
					tr, err := harness.TraceRead(ctx, s, `SELECT * FROM t40 WHERE id = ?`, id)
					if err != nil {
						b.Fatal(err)
					}
					var lat []time.Duration
					for r := 0; r < 50; r++ {
						start := time.Now()
						iter := s.Query(`SELECT * FROM t40 WHERE id = ?`, id).PageSize(5000).Iter()
						for iter.Scanner().Next() {
						}
						if err := iter.Close(); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
					slices.Sort(lat)
					b.ReportMetric(float64(tr.TombstoneCells), "tombstones/read")
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				}
			})
		}
	}
}
