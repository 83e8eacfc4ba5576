package eventlog

import (
	"context"
	"fmt"
	"slices"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
)

// Append adds events to a stream and returns them with ID and Bucket filled in.
//
// Every event needs a Time (its own time, not the time of the attempt). Its ID is
// assigned here, once, before the first attempt: clientid.TimeUUIDFromKey(Time, Key)
// when Key is set, else clientid.NewTimeUUID(Time) — unless the caller set ID already.
// Events of one bucket go in one unlogged single-partition batch (atomic), split every
// WithMaxBatch events; each row is written with the event time as its write timestamp,
// so re-appending the same events (same ids) changes nothing. Each bucket is recorded
// in the bucket index before its events. Retries go through the log's retry policy.
//
// All events are validated first; on bad input nothing is written.
func (l *Log) Append(ctx context.Context, stream string, events ...Event) ([]Event, error) {
	if stream == "" {
		return nil, ErrEmptyStream
	}
	out := make([]Event, len(events))
	now := l.cfg.now()
	for i, e := range events {
		switch {
		case e.Time.IsZero():
			return nil, fmt.Errorf("%w: event %d has no time", ErrBadTime, i)
		case e.Time.After(now.Add(l.cfg.maxFuture)):
			return nil, fmt.Errorf("%w: event %d at %v is more than %v ahead", ErrBadTime, i, e.Time, l.cfg.maxFuture)
		case len(e.Payload) > l.cfg.maxPayload:
			return nil, fmt.Errorf("%w: event %d has %d bytes, limit %d", ErrPayloadTooLarge, i, len(e.Payload), l.cfg.maxPayload)
		}
		b, err := clientid.Bucket(e.Time, l.cfg.width)
		if err != nil {
			return nil, fmt.Errorf("%w: event %d: %v", ErrBadTime, i, err)
		}
		e.Stream = stream
		e.Bucket = b
		if e.ID == (gocql.UUID{}) {
			if e.Key != nil {
				e.ID = clientid.TimeUUIDFromKey(e.Time, e.Key)
			} else {
				e.ID = clientid.NewTimeUUID(e.Time)
			}
		} else if e.ID.Version() != 1 {
			return nil, fmt.Errorf("%w: event %d: id %s is not a TimeUUID", ErrBadTime, i, e.ID)
		}
		e.Time = e.ID.Time()
		if e.Writer == "" {
			e.Writer = l.cfg.writer
		}
		out[i] = e
	}
	// Group by bucket, in time order inside each.
	byBucket := map[int64][]Event{}
	var buckets []int64
	for _, e := range out {
		if _, ok := byBucket[e.Bucket]; !ok {
			buckets = append(buckets, e.Bucket)
		}
		byBucket[e.Bucket] = append(byBucket[e.Bucket], e)
	}
	slices.Sort(buckets)
	for _, b := range buckets {
		evs := byBucket[b]
		slices.SortFunc(evs, func(x, y Event) int { return clientid.Compare(x.ID, y.ID) })
		// The index entry first: a reader that sees events of a bucket can find it.
		if !l.knownBucket(stream, b) {
			start, _ := clientid.BucketStart(b, l.cfg.width)
			// The bucket's start as write timestamp: every writer writes the same cell.
			ts := max(start.UnixMicro(), 1)
			if err := l.cfg.policy.Query(ctx, l.s, ts, l.indexCQL, stream, b, ts).Exec(l.cfg.policy); err != nil {
				return nil, fmt.Errorf("eventlog: index bucket %d: %w", b, err)
			}
			l.rememberBucket(stream, b)
		}
		for start := 0; start < len(evs); start += l.cfg.maxBatch {
			chunk := evs[start:min(start+l.cfg.maxBatch, len(evs))]
			batch := l.s.NewBatch(gocql.UnloggedBatch)
			batch.Entries = make([]gocql.BatchEntry, 0, len(chunk))
			for _, e := range chunk {
				// Absent payload and metadata are UNSET, never NULL: no tombstones.
				var meta, payload any = gocql.UnsetValue, gocql.UnsetValue
				if len(e.Metadata) > 0 {
					meta = e.Metadata
				}
				if e.Payload != nil {
					payload = e.Payload
				}
				batch.Query(l.insertCQL, stream, b, e.ID, e.Type, payload, meta, e.Writer, e.Time.UnixMicro())
			}
			if err := l.cfg.policy.ExecBatchAt(ctx, l.s, batch, chunk[len(chunk)-1].Time.UnixMicro()); err != nil {
				return nil, fmt.Errorf("eventlog: append to bucket %d: %w", b, err)
			}
		}
	}
	return out, nil
}
