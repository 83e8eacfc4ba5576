package eventlog

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Append adds events to a stream and returns them with ID, Time and Bucket filled in.
//
// Every event needs a time: its own time, not the time of the attempt. Its ID is
// assigned here, once, before the first attempt: clientid.TimeUUIDFromKey(Time, Key)
// when Key is set, else clientid.NewTimeUUID(Time) — unless the caller set ID already.
// An event is stored, bucketed and ordered by its ID's time, so a caller-set ID must be
// a TimeUUID of the event's Time (to its 100 ns resolution; ErrIDTimeMismatch
// otherwise); with an ID, Time may be left zero and is taken from the ID.
//
// Events of one bucket go in one unlogged single-partition batch (atomic), split every
// WithMaxBatch events; each row is written with the event time as its write timestamp,
// so re-appending the same events (same ids) changes nothing. Each bucket is recorded
// in the bucket index before its events. Retries go through the log's retry policy.
//
// All events are validated first; on bad input nothing is written. When a write fails,
// Append returns the events with their ids and an *AppendError (ErrAppendIncomplete)
// that carries them too: some batches may have applied. Re-submitting exactly those
// events (same ids) is idempotent and appends each event once; re-submitting the
// original key-less events would mint new ids and duplicate what applied.
func (l *Log) Append(ctx context.Context, stream string, events ...Event) ([]Event, error) {
	if stream == "" {
		return nil, ErrEmptyStream
	}
	out := make([]Event, len(events))
	now := l.cfg.now()
	for i, e := range events {
		hasID := e.ID != (gocql.UUID{})
		if hasID && e.ID.Version() != 1 {
			return nil, fmt.Errorf("%w: event %d: id %s is not a TimeUUID", ErrBadTime, i, e.ID)
		}
		if hasID && e.Time.IsZero() {
			e.Time = e.ID.Time()
		}
		switch {
		case e.Time.IsZero():
			return nil, fmt.Errorf("%w: event %d has no time", ErrBadTime, i)
		case e.Time.After(now.Add(l.cfg.maxFuture)):
			return nil, fmt.Errorf("%w: event %d at %v is more than %v ahead", ErrBadTime, i, e.Time, l.cfg.maxFuture)
		case len(e.Payload) > l.cfg.maxPayload:
			return nil, fmt.Errorf("%w: event %d has %d bytes, limit %d", ErrPayloadTooLarge, i, len(e.Payload), l.cfg.maxPayload)
		}
		if hasID {
			// Reads find an event by its id's time (bucket and event_id bounds alike): an
			// id of another time would be stored where bounded reads do not look.
			if d := e.Time.Sub(e.ID.Time()); d < 0 || d >= 100*time.Nanosecond {
				return nil, fmt.Errorf("%w: event %d: id %s is of %v, event time %v", ErrIDTimeMismatch, i, e.ID, e.ID.Time(), e.Time)
			}
		} else if e.Key != nil {
			e.ID = clientid.TimeUUIDFromKey(e.Time, e.Key)
		} else {
			e.ID = clientid.NewTimeUUID(e.Time)
		}
		e.Time = e.ID.Time()
		b, err := clientid.Bucket(e.Time, l.cfg.width)
		if err != nil {
			return nil, fmt.Errorf("%w: event %d: %v", ErrBadTime, i, err)
		}
		e.Stream = stream
		e.Bucket = b
		if e.Writer == "" {
			e.Writer = l.cfg.writer
		}
		out[i] = e
	}
	if err := l.write(ctx, stream, out); err != nil {
		return out, &AppendError{Stream: stream, Events: slices.Clone(out), Err: err}
	}
	return out, nil
}

// write appends validated events, bucket by bucket.
func (l *Log) write(ctx context.Context, stream string, events []Event) error {
	indexTTL, err := l.indexTTL(ctx)
	if err != nil {
		return err
	}
	// Group by bucket, in time order inside each.
	byBucket := map[int64][]Event{}
	var buckets []int64
	for _, e := range events {
		if _, ok := byBucket[e.Bucket]; !ok {
			buckets = append(buckets, e.Bucket)
		}
		byBucket[e.Bucket] = append(byBucket[e.Bucket], e)
	}
	slices.Sort(buckets)
	for _, b := range buckets {
		evs := byBucket[b]
		slices.SortFunc(evs, func(x, y Event) int { return clientid.Compare(x.ID, y.ID) })
		for start := 0; start < len(evs); start += l.cfg.maxBatch {
			// The index entry first: a reader that sees events of a bucket can find it.
			// Checked per batch: with a TTL the entry must be fresh when the events land.
			if !l.knownBucket(stream, b, indexTTL) {
				bstart, _ := clientid.BucketStart(b, l.cfg.width)
				// The bucket's start as write timestamp: every writer writes the same row.
				// At equal timestamps the later expiry wins, so a re-write extends its life.
				ts := max(bstart.UnixMicro(), 1)
				written := time.Now()
				if err := l.cfg.policy.Exec(ctx, l.s.Query(l.indexCQL, stream, b, ts, indexTTL), retry.AtTimestamp(ts)); err != nil {
					return fmt.Errorf("eventlog: index bucket %d: %w", b, err)
				}
				l.rememberBucket(stream, b, written)
			}
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
			if err := l.cfg.policy.ExecBatch(ctx, l.s, batch, retry.AtTimestamp(chunk[len(chunk)-1].Time.UnixMicro())); err != nil {
				return fmt.Errorf("eventlog: append to bucket %d: %w", b, err)
			}
		}
	}
	return nil
}
