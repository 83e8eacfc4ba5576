package eventlog

import (
	"context"
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/cqlsafe/cqlsafe/clientid"
)

// ReadOption narrows or orders a Read. An invalid value is the first (and only) error
// the Read yields.
type ReadOption func(*readConfig) error

type readConfig struct {
	backward bool
	from, to time.Time
	limit    int
}

// Backward reads newest first.
func Backward() ReadOption { return func(c *readConfig) error { c.backward = true; return nil } }

// From starts at events at or after t.
func From(t time.Time) ReadOption { return func(c *readConfig) error { c.from = t; return nil } }

// To ends at events at or before t.
func To(t time.Time) ReadOption { return func(c *readConfig) error { c.to = t; return nil } }

// Limit stops after n events; n ≥ 1 (no Limit: no limit).
func Limit(n int) ReadOption {
	return func(c *readConfig) error {
		if n < 1 {
			return fmt.Errorf("eventlog: limit %d: want at least 1", n)
		}
		c.limit = n
		return nil
	}
}

// Read streams a stream's events in TimeUUID order (Cassandra's order), across buckets,
// forwards or backwards, optionally bounded in time and count. Rows are fetched a page
// at a time (WithPageSize), so memory stays constant however long the stream. The
// sequence stops at the first error, which it yields.
func (l *Log) Read(ctx context.Context, stream string, opts ...ReadOption) iter.Seq2[Event, error] {
	var rc readConfig
	var optErr error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if optErr = o(&rc); optErr != nil {
			break
		}
	}
	return func(yield func(Event, error) bool) {
		if optErr != nil {
			yield(Event{}, optErr)
			return
		}
		if stream == "" {
			yield(Event{}, ErrEmptyStream)
			return
		}
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if !rc.from.IsZero() {
			b, err := clientid.Bucket(rc.from, l.cfg.width)
			if err != nil {
				yield(Event{}, err)
				return
			}
			lo = b
		}
		if !rc.to.IsZero() {
			b, err := clientid.Bucket(rc.to, l.cfg.width)
			if err != nil {
				yield(Event{}, err)
				return
			}
			hi = b
		}
		bq := l.bucketsAscCQL
		dir := 0
		if rc.backward {
			bq, dir = l.bucketsDescCQL, 1
		}
		bounds, args := 0, []any{}
		if !rc.from.IsZero() {
			bounds |= 1
			args = append(args, clientid.MinTimeUUID(rc.from))
		}
		if !rc.to.IsZero() {
			bounds |= 2
			args = append(args, clientid.MaxTimeUUID(rc.to))
		}
		n := 0
		bi := l.s.Query(bq, stream, lo, hi).WithContext(ctx).PageSize(l.cfg.pageSize).Iter()
		var bucket int64
		for bi.Scan(&bucket) {
			q := l.s.Query(l.readCQL[dir][bounds], append([]any{stream, bucket}, args...)...).
				WithContext(ctx).PageSize(l.cfg.pageSize).Idempotent(true)
			it := q.Iter()
			var e Event
			var payload []byte
			var meta map[string]string
			for it.Scan(&e.ID, &e.Type, &payload, &meta, &e.Writer) {
				e.Stream, e.Bucket, e.Time = stream, bucket, e.ID.Time()
				e.Payload, e.Metadata = payload, meta
				payload, meta = nil, nil
				if !yield(e, nil) {
					it.Close()
					bi.Close()
					return
				}
				e = Event{}
				n++
				if rc.limit > 0 && n >= rc.limit {
					it.Close()
					bi.Close()
					return
				}
			}
			if err := it.Close(); err != nil {
				bi.Close()
				yield(Event{}, err)
				return
			}
		}
		if err := bi.Close(); err != nil {
			yield(Event{}, err)
		}
	}
}

// Fold reduces attribute events to current state: for each Type (the attribute name)
// the event with the latest TimeUUID, in Cassandra's order. Use one stream per entity
// whose events are attribute changes (Type = attribute, Payload = value): the field
// report's users example.
func Fold(events iter.Seq2[Event, error]) (map[string]Event, error) {
	state := map[string]Event{}
	for e, err := range events {
		if err != nil {
			return state, err
		}
		if cur, ok := state[e.Type]; !ok || clientid.Compare(cur.ID, e.ID) < 0 {
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

// Sizes scans a stream and reports rows and bytes per bucket, flagging buckets past the
// rule of thumb. It reads every event: run it on a sample stream, not on a hot path.
func (l *Log) Sizes(ctx context.Context, stream string) ([]BucketSize, error) {
	var out []BucketSize
	for e, err := range l.Read(ctx, stream) {
		if err != nil {
			return out, err
		}
		if len(out) == 0 || out[len(out)-1].Bucket != e.Bucket {
			start, _ := clientid.BucketStart(e.Bucket, l.cfg.width)
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
