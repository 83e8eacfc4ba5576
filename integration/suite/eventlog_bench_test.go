package suite

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/eventlog"
)

// BenchmarkAppendVsRawInsert: eventlog.Append of one event per call against a raw gocql
// INSERT of the same row (same table, same values), same concurrency.
func BenchmarkAppendVsRawInsert(b *testing.B) {
	s, ks := node.Keyspace(b)
	l := newLog(b, s, ks)
	insert := `INSERT INTO events (stream_id, bucket, event_id, type, payload, writer) VALUES (?, ?, ?, ?, ?, ?)`
	payload := []byte("payload-0123456789")
	var seq atomic.Int64
	b.Run("raw_insert", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				at := time.Now().Add(time.Duration(seq.Add(1)))
				bucket, _ := clientid.Bucket(at, 24*time.Hour)
				if err := s.Query(insert, "raw", bucket, clientid.NewTimeUUID(at), "e", payload, "w").Exec(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := l.Append(context.Background(), "log", eventlog.Event{Time: time.Now(), Type: "e", Payload: payload, Writer: "w"}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkReplayMillion: replay of 1,000,000 events; reports events/s and peak heap
// growth. Run with -benchtime=1x.
func BenchmarkReplayMillion(b *testing.B) {
	s, ks := node.Keyspace(b)
	l := newLog(b, s, ks, eventlog.WithBucketWidth(time.Hour), eventlog.WithPageSize(2000))
	appendMany(b, l, "big", time.Now().Add(-30*time.Hour), 1_000_000, 30*time.Hour)
	b.ResetTimer()
	for b.Loop() {
		rate, growth, count := replay(b, l, "big")
		b.ReportMetric(rate, "events/s")
		b.ReportMetric(float64(growth)/(1<<20), "heap-growth-MB")
		b.ReportMetric(float64(count), "events")
	}
}
