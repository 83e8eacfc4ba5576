package eventlog

import (
	"context"
	"iter"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	core "github.com/cqlsafe/cqlsafe/internal/core/eventlog"
)

// ReadOption narrows or orders a Read. An invalid value is the first (and only) error
// the Read yields.
type ReadOption = core.ReadOption

// Backward reads newest first.
func Backward() ReadOption { return core.Backward() }

// From starts at events at or after t.
func From(t time.Time) ReadOption { return core.From(t) }

// To ends at events at or before t.
func To(t time.Time) ReadOption { return core.To(t) }

// Limit stops after n events; n ≥ 1 (no Limit: no limit).
func Limit(n int) ReadOption { return core.Limit(n) }

// Read streams a stream's events in TimeUUID order (Cassandra's order), across buckets,
// forwards or backwards, optionally bounded in time and count. Rows are fetched a page
// at a time (WithPageSize), so memory stays constant however long the stream. The
// sequence stops at the first error, which it yields.
func (l *Log) Read(ctx context.Context, stream string, opts ...ReadOption) iter.Seq2[Event, error] {
	plan, err := l.l.PlanRead(stream, opts)
	bounds := make([]any, len(plan.Bounds))
	for i, b := range plan.Bounds {
		bounds[i] = gocql.UUID(b)
	}
	return core.Read(stream, plan, err,
		func(yield func(int64) bool) error {
			bi := l.s.Query(plan.BucketsCQL, stream, plan.Lo, plan.Hi).PageSize(l.l.Cfg.PageSize).IterContext(ctx)
			var bucket int64
			for bi.Scan(&bucket) {
				if !yield(bucket) {
					bi.Close()
					return nil
				}
			}
			return bi.Close()
		},
		func(bucket int64, yield func(Event) bool) error {
			it := l.s.Query(plan.EventsCQL, append([]any{stream, bucket}, bounds...)...).
				PageSize(l.l.Cfg.PageSize).Idempotent(true).IterContext(ctx)
			var e Event
			for it.Scan(&e.ID, &e.Type, &e.Payload, &e.Metadata, &e.Writer) {
				if !yield(e) {
					it.Close()
					return nil
				}
				e = Event{}
			}
			return it.Close()
		})
}

// Fold reduces attribute events to current state: for each Type (the attribute name)
// the event with the latest TimeUUID, in Cassandra's order. Use one stream per entity
// whose events are attribute changes (Type = attribute, Payload = value): the field
// report's users example.
func Fold(events iter.Seq2[Event, error]) (map[string]Event, error) { return core.Fold(events) }

// BucketSize is what a bucket of a stream holds.
type BucketSize = core.BucketSize

// Limits of the partition-size rule of thumb.
const (
	MaxBucketRows  = core.MaxBucketRows
	MaxBucketBytes = core.MaxBucketBytes
)

// Sizes scans a stream and reports rows and bytes per bucket, flagging buckets past the
// rule of thumb. It reads every event: run it on a sample stream, not on a hot path.
func (l *Log) Sizes(ctx context.Context, stream string) ([]BucketSize, error) {
	return core.Sizes(l.Read(ctx, stream), l.l.Cfg.Width)
}
