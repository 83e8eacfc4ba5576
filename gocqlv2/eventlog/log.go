package eventlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	core "github.com/cqlsafe/cqlsafe/internal/core/eventlog"
)

// Sentinels for bad input; nothing is written when one is returned.
var (
	ErrEmptyStream     = core.ErrEmptyStream
	ErrBadTime         = core.ErrBadTime
	ErrPayloadTooLarge = core.ErrPayloadTooLarge
	ErrInvalidName     = core.ErrInvalidName
	// ErrIDTimeMismatch: a caller-set ID is not a TimeUUID of the event's Time.
	ErrIDTimeMismatch = core.ErrIDTimeMismatch
)

// ErrAppendIncomplete is matched (errors.Is) by every *AppendError.
var ErrAppendIncomplete = core.ErrAppendIncomplete

// AppendError is returned by Append when a write failed after validation: some of the
// events may have been written, none, or all (a dropped response). Events holds every
// event of the call, in the order given, with ID, Time, Bucket and Writer assigned:
// re-submitting exactly them rewrites the same rows with the same write timestamps, so
// each event ends up appended once. Err is the write's error (often a
// *retry.OutcomeUnknownError; errors.Is/As see through to it).
type AppendError = core.AppendError[gocql.UUID]

// Event is one event of a stream.
//
// ID is the event's TimeUUID (Append fills it when zero: from Time, or from Key); Time
// is when the event happened (to 100 ns), required for Append and filled from ID when
// read; Writer identifies the process that appended it (default: hostname:pid); Key,
// when set, makes the id deterministic (clientid.TimeUUIDFromKey(Time, Key)): a
// re-submitted request with the same key and time appends nothing new; Bucket is the
// time bucket the event is stored in (set by Append and Read).
type Event = core.Event[gocql.UUID]

// Log is an event log table bound to a session.
type Log struct {
	s      *gocql.Session
	policy *retry.Policy
	l      *core.Log
}

// Option configures a Log.
type Option func(*config) error

type config struct {
	core.Config
	policy *retry.Policy
}

// defaults: one-day buckets, payloads up to 1 MiB, event times up to 1 hour in the
// future, at most 100 events per batch, writer hostname:pid, retries through
// retry.NewPolicy(), pages of 1000 rows.
func defaults() config { return config{Config: core.Defaults(), policy: retry.NewPolicy()} }

// set adapts one of the core's options.
func set(o core.Option) Option { return func(c *config) error { return o(&c.Config) } }

// WithBucketWidth sets the time bucket width (default 24h). Choose it so a bucket of
// the busiest stream stays under ~100k rows and 32 MB (see Sizes). All readers and
// writers of a table must use the same width.
func WithBucketWidth(d time.Duration) Option { return set(core.WithBucketWidth(d)) }

// WithMaxPayload bounds payload size in bytes.
func WithMaxPayload(n int) Option { return set(core.WithMaxPayload(n)) }

// WithMaxFuture bounds how far in the future an event time may be.
func WithMaxFuture(d time.Duration) Option { return set(core.WithMaxFuture(d)) }

// WithWriter sets the writer id recorded with each event.
func WithWriter(id string) Option { return set(core.WithWriter(id)) }

// WithRetryPolicy retries appends through p.
func WithRetryPolicy(p *retry.Policy) Option {
	return func(c *config) error {
		if p == nil {
			return errors.New("eventlog: nil retry policy")
		}
		if err := p.Err(); err != nil {
			return fmt.Errorf("eventlog: %w", err)
		}
		c.policy = p
		return nil
	}
}

// WithPageSize sets the rows fetched per page when reading.
func WithPageSize(n int) Option { return set(core.WithPageSize(n)) }

// WithMaxBatch bounds the events per batch (default 100). A bucket with more events in
// one Append is written in several batches: atomicity is per batch.
func WithMaxBatch(n int) Option { return set(core.WithMaxBatch(n)) }

// New binds a Log to keyspace.table (created from the schema "eventlog" template, which
// also creates table_buckets).
func New(s *gocql.Session, keyspace, table string, opts ...Option) (*Log, error) {
	l, err := core.New(keyspace, table, core.Config{})
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, errors.New("eventlog: nil session")
	}
	c := defaults()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	l.Cfg = c.Config
	return &Log{s: s, policy: c.policy, l: l}, nil
}

// indexTTL is the TTL index rows are written with (core.Log.IndexTTL), read once.
func (l *Log) indexTTL(ctx context.Context) (int, error) {
	return l.l.IndexTTL(func() (int, bool, error) {
		var ttl int
		err := l.s.Query(l.l.TTLCQL, l.l.Keyspace, l.l.Table).Idempotent(true).ScanContext(ctx, &ttl)
		if errors.Is(err, gocql.ErrNotFound) {
			return 0, false, nil
		}
		return ttl, err == nil, err
	})
}

// BucketWidth returns the log's bucket width.
func (l *Log) BucketWidth() time.Duration { return l.l.Cfg.Width }
