package suite

import (
	"context"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkTombstoneDeleteVsPlainDelete: tombstone.Delete (read with WRITETIMEs, then a
// logged batch of tombstone insert + delete) against a plain DELETE of the same kind of
// row, same concurrency. After the run it flushes the tombstone table and reports the
// bytes a tombstone costs on disk per deleted row.
func BenchmarkTombstoneDeleteVsPlainDelete(b *testing.B) {
	s, tbl, st := tombstoneSetup(b)
	ctx := context.Background()
	var next atomic.Int64
	prepare := func(n int) int64 {
		first := next.Add(int64(n)) - int64(n)
		for i := int64(0); i < int64(n); i++ {
			insertAccount(b, s, int(first+i), "name-0123456789")
		}
		return first
	}
	// deletes inserts b.N fresh rows, then deletes them with del from 16 goroutines.
	deletes := func(b *testing.B, del func(id int64) error) {
		first := prepare(b.N)
		var i atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := del(first + i.Add(1) - 1); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("plain_delete", func(b *testing.B) {
		deletes(b, func(id int64) error {
			return s.Query(`DELETE FROM accounts WHERE org = 'acme' AND id = ?`, id).Exec()
		})
	})
	var deleted atomic.Int64
	b.Run("tombstone_delete", func(b *testing.B) {
		deletes(b, func(id int64) error {
			_, err := st.Delete(ctx, tbl, map[string]any{"org": "acme", "id": id}, "bench")
			if err == nil {
				deleted.Add(1)
			}
			return err
		})
	})
	if err := node.Flush(ctx, tbl.Keyspace, "tombstones"); err != nil {
		b.Logf("flush: %v (bytes per tombstone not measured)", err)
		return
	}
	out, err := node.Nodetool(ctx, "tablestats", tbl.Keyspace+".tombstones")
	if err != nil {
		b.Logf("tablestats: %v", err)
		return
	}
	if m := regexp.MustCompile(`Space used \(live\): (\d+)`).FindStringSubmatch(out); m != nil && deleted.Load() > 0 {
		bytes, _ := strconv.ParseFloat(m[1], 64)
		b.Logf("tombstone table: %.0f bytes on disk for %d tombstones = %.0f bytes per deleted row (compressed SSTable)",
			bytes, deleted.Load(), bytes/float64(deleted.Load()))
	}
}
