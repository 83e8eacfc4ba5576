package eventlog

import (
	"iter"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/clientid"
)

// Fold reduces attribute events to current state: for each Type the event with the
// latest TimeUUID, in Cassandra's order.
func Fold[U UUID](events iter.Seq2[Event[U], error]) (map[string]Event[U], error) {
	state := map[string]Event[U]{}
	for e, err := range events {
		if err != nil {
			return state, err
		}
		if cur, ok := state[e.Type]; !ok || clientid.Compare([16]byte(cur.ID), [16]byte(e.ID)) < 0 {
			state[e.Type] = e
		}
	}
	return state, nil
}

// BucketSize is what a bucket of a stream holds.
type BucketSize struct {
	Bucket int64
	Start  time.Time
	Rows   int64
	// Bytes estimates the bucket's data: payload, type, metadata and writer bytes plus
	// 40 bytes of per-row overhead.
	Bytes int64
	// TooBig: past the rule of thumb (100k rows or 32 MB): choose a narrower width.
	TooBig bool
}

// Limits of the partition-size rule of thumb.
const (
	MaxBucketRows  = 100_000
	MaxBucketBytes = 32 << 20
)

// Sizes reports rows and bytes per bucket of a stream's events, flagging buckets past
// the rule of thumb.
func Sizes[U UUID](events iter.Seq2[Event[U], error], width time.Duration) ([]BucketSize, error) {
	var out []BucketSize
	for e, err := range events {
		if err != nil {
			return out, err
		}
		if len(out) == 0 || out[len(out)-1].Bucket != e.Bucket {
			start, _ := clientid.BucketStart(e.Bucket, width)
			out = append(out, BucketSize{Bucket: e.Bucket, Start: start})
		}
		bs := &out[len(out)-1]
		bs.Rows++
		bs.Bytes += int64(len(e.Payload)+len(e.Type)+len(e.Writer)) + 40
		for k, v := range e.Metadata {
			bs.Bytes += int64(len(k) + len(v))
		}
		bs.TooBig = bs.Rows > MaxBucketRows || bs.Bytes > MaxBucketBytes
	}
	return out, nil
}

// Read runs plan (planErr: the error PlanRead returned): buckets yields the stream's
// buckets in order, events the events of one bucket (ID, Type, Payload, Metadata and
// Writer); Read fills Stream, Bucket and Time, stops at Limit, and yields the first
// error and nothing after it. Each scan closes what it opened when its yield returns
// false, and then returns nil.
func Read[U UUID](stream string, plan ReadPlan, planErr error,
	buckets func(yield func(bucket int64) bool) error,
	events func(bucket int64, yield func(Event[U]) bool) error) iter.Seq2[Event[U], error] {
	return func(yield func(Event[U], error) bool) {
		if planErr != nil {
			yield(Event[U]{}, planErr)
			return
		}
		n, stop := 0, false
		err := buckets(func(b int64) bool {
			err := events(b, func(e Event[U]) bool {
				e.Stream, e.Bucket, e.Time = stream, b, e.ID.Time()
				if !yield(e, nil) {
					stop = true
					return false
				}
				n++
				if plan.Limit > 0 && n >= plan.Limit {
					stop = true
					return false
				}
				return true
			})
			if err != nil && !stop {
				yield(Event[U]{}, err)
				stop = true
			}
			return !stop
		})
		if err != nil && !stop {
			yield(Event[U]{}, err)
		}
	}
}
