package eventlog

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Sentinels for bad input; nothing is written when one is returned.
var (
	ErrEmptyStream     = errors.New("eventlog: empty stream id")
	ErrBadTime         = errors.New("eventlog: event time is zero or too far in the future")
	ErrPayloadTooLarge = errors.New("eventlog: payload too large")
	ErrInvalidName     = errors.New("eventlog: invalid keyspace or table name")
)

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

	// indexed remembers (stream, bucket) pairs whose index row this Log has written, so
	// appends to a known bucket cost one round trip. Index rows never change, so the
	// cache cannot be stale; it is bounded and simply cleared when full.
	indexMu sync.Mutex
	indexed map[bucketKey]struct{}

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
	l.indexCQL = "INSERT INTO " + qi + " (stream_id, bucket) VALUES (?, ?) USING TIMESTAMP ?"
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

func (l *Log) knownBucket(stream string, b int64) bool {
	l.indexMu.Lock()
	defer l.indexMu.Unlock()
	_, ok := l.indexed[bucketKey{stream, b}]
	return ok
}

func (l *Log) rememberBucket(stream string, b int64) {
	l.indexMu.Lock()
	defer l.indexMu.Unlock()
	if l.indexed == nil || len(l.indexed) >= indexCacheMax {
		l.indexed = make(map[bucketKey]struct{})
	}
	l.indexed[bucketKey{stream, b}] = struct{}{}
}

// BucketWidth returns the log's bucket width.
func (l *Log) BucketWidth() time.Duration { return l.cfg.width }
