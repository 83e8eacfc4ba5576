package eventlog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Sentinels for bad input; nothing is written when one is returned.
var (
	ErrEmptyStream     = errors.New("eventlog: empty stream id")
	ErrBadTime         = errors.New("eventlog: event time is zero or too far in the future")
	ErrPayloadTooLarge = errors.New("eventlog: payload too large")
	ErrInvalidName     = errors.New("eventlog: invalid keyspace or table name")
	// ErrIDTimeMismatch: a caller-set ID is not a TimeUUID of the event's Time.
	ErrIDTimeMismatch = errors.New("eventlog: event id's time differs from the event time")
)

// ErrAppendIncomplete is matched (errors.Is) by every *AppendError.
var ErrAppendIncomplete = errors.New("eventlog: append may be incomplete")

// AppendError is returned by Append when a write failed after validation: some of the
// events may have been written, none, or all (a dropped response). Events holds every
// event of the call, in the order given, with ID, Time, Bucket and Writer assigned:
// re-submitting exactly them rewrites the same rows with the same write timestamps, so
// each event ends up appended once. Err is the write's error (often a
// *retry.OutcomeUnknownError; errors.Is/As see through to it).
type AppendError struct {
	Stream string
	Events []Event
	Err    error
}

func (e *AppendError) Error() string {
	return fmt.Sprintf("eventlog: append of %d event(s) to stream %q may be incomplete (re-submit AppendError.Events, not new ids): %v",
		len(e.Events), e.Stream, e.Err)
}

// Is makes errors.Is(err, ErrAppendIncomplete) true.
func (e *AppendError) Is(target error) bool { return target == ErrAppendIncomplete }

// Unwrap returns the write's error.
func (e *AppendError) Unwrap() error { return e.Err }

// Event is one event of a stream.
type Event struct {
	Stream string
	// ID is the event's TimeUUID; Append fills it when zero (from Time, or from Key).
	ID gocql.UUID
	// Time is when the event happened (to 100 ns). Required for Append; filled from ID
	// when read.
	Time     time.Time
	Type     string
	Payload  []byte
	Metadata map[string]string
	// Writer identifies the process that appended it (default: hostname:pid).
	Writer string
	// Key, when set, makes the id deterministic: clientid.TimeUUIDFromKey(Time, Key). A
	// re-submitted request with the same key and time appends nothing new.
	Key []byte
	// Bucket is the time bucket the event is stored in (set by Append and Read).
	Bucket int64
}

// Log is an event log table bound to a session.
type Log struct {
	s        *gocql.Session
	keyspace string
	table    string
	cfg      config

	// indexed remembers when this Log wrote the index row of a (stream, bucket), so
	// appends to a known bucket cost one round trip. Without a TTL an index row never
	// changes and an entry stays valid; with one, an entry is trusted for
	// indexRefresh only (see indexTTL). Bounded: simply cleared when full.
	indexMu sync.Mutex
	indexed map[bucketKey]time.Time

	// ttlIndex is the TTL (seconds) index rows are written with, read once per Log.
	ttlMu     sync.Mutex
	ttlIndex  int
	ttlLoaded bool

	insertCQL, indexCQL           string
	bucketsAscCQL, bucketsDescCQL string
	readCQL                       [2][4]string // [desc][bounds] (none, from, to, both)
}

// Option configures a Log.
type Option func(*config) error

type config struct {
	width      time.Duration
	maxPayload int
	maxFuture  time.Duration
	maxBatch   int
	writer     string
	policy     *retry.Policy
	pageSize   int
	now        func() time.Time
}

// defaults: one-day buckets, payloads up to 1 MiB, event times up to 1 hour in the
// future, at most 100 events per batch, writer hostname:pid, retries through
// retry.NewPolicy(), pages of 1000 rows.
func defaults() config {
	host, _ := os.Hostname()
	return config{width: 24 * time.Hour, maxPayload: 1 << 20, maxFuture: time.Hour, maxBatch: 100,
		writer: fmt.Sprintf("%s:%d", host, os.Getpid()), policy: retry.NewPolicy(), pageSize: 1000, now: time.Now}
}

// WithBucketWidth sets the time bucket width (default 24h). Choose it so a bucket of
// the busiest stream stays under ~100k rows and 32 MB (see Sizes). All readers and
// writers of a table must use the same width.
func WithBucketWidth(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Second {
			return fmt.Errorf("eventlog: bucket width %v below 1s", d)
		}
		c.width = d
		return nil
	}
}

// WithMaxPayload bounds payload size in bytes.
func WithMaxPayload(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("eventlog: max payload %d", n)
		}
		c.maxPayload = n
		return nil
	}
}

// WithMaxFuture bounds how far in the future an event time may be.
func WithMaxFuture(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("eventlog: max future %v", d)
		}
		c.maxFuture = d
		return nil
	}
}

// WithWriter sets the writer id recorded with each event.
func WithWriter(id string) Option { return func(c *config) error { c.writer = id; return nil } }

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
func WithPageSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("eventlog: page size %d", n)
		}
		c.pageSize = n
		return nil
	}
}

// WithMaxBatch bounds the events per batch (default 100). A bucket with more events in
// one Append is written in several batches: atomicity is per batch.
func WithMaxBatch(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("eventlog: max batch %d", n)
		}
		c.maxBatch = n
		return nil
	}
}

// New binds a Log to keyspace.table (created from the schema "eventlog" template, which
// also creates table_buckets).
func New(s *gocql.Session, keyspace, table string, opts ...Option) (*Log, error) {
	for _, n := range []string{keyspace, table, table + "_buckets"} {
		if err := cqltext.ValidName(n); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidName, err)
		}
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
	l := &Log{s: s, keyspace: keyspace, table: table, cfg: c}
	q := cqltext.QuoteQualified(keyspace, table)
	qi := cqltext.QuoteQualified(keyspace, table+"_buckets")
	l.insertCQL = "INSERT INTO " + q + " (stream_id, bucket, event_id, type, payload, metadata, writer) VALUES (?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?"
	l.indexCQL = "INSERT INTO " + qi + " (stream_id, bucket) VALUES (?, ?) USING TIMESTAMP ? AND TTL ?"
	l.bucketsAscCQL = "SELECT bucket FROM " + qi + " WHERE stream_id = ? AND bucket >= ? AND bucket <= ? ORDER BY bucket ASC"
	l.bucketsDescCQL = "SELECT bucket FROM " + qi + " WHERE stream_id = ? AND bucket >= ? AND bucket <= ? ORDER BY bucket DESC"
	for d, dir := range []string{"ASC", "DESC"} {
		base := "SELECT event_id, type, payload, metadata, writer FROM " + q + " WHERE stream_id = ? AND bucket = ?"
		l.readCQL[d][0] = base + " ORDER BY event_id " + dir
		l.readCQL[d][1] = base + " AND event_id >= ? ORDER BY event_id " + dir
		l.readCQL[d][2] = base + " AND event_id <= ? ORDER BY event_id " + dir
		l.readCQL[d][3] = base + " AND event_id >= ? AND event_id <= ? ORDER BY event_id " + dir
	}
	return l, nil
}

type bucketKey struct {
	stream string
	bucket int64
}

const indexCacheMax = 100_000

// Index rows of a table whose events expire outlive them: an event's TTL runs from
// when it lands, so the index row of its bucket is (re)written at most indexRefresh
// before it, with the events' TTL plus indexMargin (> indexRefresh).
const (
	indexMargin  = time.Hour
	indexRefresh = indexMargin / 2
	maxTTL       = 20 * 365 * 24 * 60 * 60 // Cassandra's limit, in seconds
)

// indexTTL returns the TTL index rows are written with: 0 (never expire) when the
// events table has no default_time_to_live, else that TTL plus indexMargin. It reads
// the table's schema once per Log: re-create the Log after altering the TTL.
func (l *Log) indexTTL(ctx context.Context) (int, error) {
	l.ttlMu.Lock()
	defer l.ttlMu.Unlock()
	if l.ttlLoaded {
		return l.ttlIndex, nil
	}
	var ttl int
	err := l.s.Query(`SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?`,
		l.keyspace, l.table).WithContext(ctx).Idempotent(true).Scan(&ttl)
	if errors.Is(err, gocql.ErrNotFound) {
		return 0, fmt.Errorf("eventlog: table %s.%s does not exist", l.keyspace, l.table)
	}
	if err != nil {
		return 0, fmt.Errorf("eventlog: read the TTL of %s.%s: %w", l.keyspace, l.table, err)
	}
	if ttl > 0 {
		ttl = min(ttl+int(indexMargin/time.Second), maxTTL)
	}
	l.ttlIndex, l.ttlLoaded = ttl, true
	return ttl, nil
}

// knownBucket reports whether the index row of (stream, b) was written recently
// enough to need no re-write.
func (l *Log) knownBucket(stream string, b int64, ttl int) bool {
	l.indexMu.Lock()
	defer l.indexMu.Unlock()
	at, ok := l.indexed[bucketKey{stream, b}]
	return ok && (ttl == 0 || time.Since(at) < indexRefresh)
}

func (l *Log) rememberBucket(stream string, b int64, at time.Time) {
	l.indexMu.Lock()
	defer l.indexMu.Unlock()
	if l.indexed == nil || len(l.indexed) >= indexCacheMax {
		l.indexed = make(map[bucketKey]time.Time)
	}
	l.indexed[bucketKey{stream, b}] = at
}

// BucketWidth returns the log's bucket width.
func (l *Log) BucketWidth() time.Duration { return l.cfg.width }
