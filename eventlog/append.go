package eventlog

import (
	"context"
	"slices"

	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/eventlog"
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
	out, err := core.Prepare(l.l, stream, events)
	if err != nil {
		return nil, err
	}
	if err := l.write(ctx, stream, out); err != nil {
		return out, &AppendError{Stream: stream, Events: slices.Clone(out), Err: err}
	}
	return out, nil
}

// write appends validated events, bucket by bucket (core.Write), through the log's
// retry policy.
func (l *Log) write(ctx context.Context, stream string, events []Event) error {
	indexTTL, err := l.indexTTL(ctx)
	if err != nil {
		return err
	}
	return core.Write(l.l, stream, events, indexTTL, core.Writer[gocql.UUID]{
		Index: func(stream string, b, ts int64, ttl int) error {
			return l.policy.Exec(ctx, l.s.Query(l.l.IndexCQL, stream, b, ts, ttl), retry.AtTimestamp(ts))
		},
		Batch: func(stream string, b int64, chunk []Event, ts int64) error {
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
				batch.Query(l.l.InsertCQL, stream, b, e.ID, e.Type, payload, meta, e.Writer, e.Time.UnixMicro())
			}
			return l.policy.ExecBatch(ctx, l.s, batch, retry.AtTimestamp(ts))
		},
	})
}
