// Package eventlog is the driver-free part of cqlsafe's eventlog package: the event, its
// validation and id assignment, the statements, the grouping of an append into
// single-bucket batches, the bucket index cache and the read bounds. The adapters
// (eventlog for gocql v1.7, gocqlv2/eventlog for the Apache driver v2) execute the
// statements with their driver and document the API.
package eventlog

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// Sentinels for bad input; nothing is written when one is returned.
var (
	ErrEmptyStream     = errors.New("eventlog: empty stream id")
	ErrBadTime         = errors.New("eventlog: event time is zero or too far in the future")
	ErrPayloadTooLarge = errors.New("eventlog: payload too large")
	ErrInvalidName     = errors.New("eventlog: invalid keyspace or table name")
	ErrIDTimeMismatch  = errors.New("eventlog: event id's time differs from the event time")
	// ErrAppendIncomplete is matched (errors.Is) by every *AppendError.
	ErrAppendIncomplete = errors.New("eventlog: append may be incomplete")
)

// UUID is a driver's UUID type: 16 bytes with version and TimeUUID time.
type UUID interface {
	~[16]byte
	Version() int
	Time() time.Time
	String() string
}

// Event is one event of a stream, with the driver's UUID type (documented by the
// adapters as eventlog.Event).
type Event[U UUID] struct {
	Stream string
	// ID is the event's TimeUUID; Append fills it when zero (from Time, or from Key).
	ID U
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

// AppendError is returned by Append when a write failed after validation (documented
// by the adapters).
type AppendError[U UUID] struct {
	Stream string
	Events []Event[U]
	Err    error
}

func (e *AppendError[U]) Error() string {
	return fmt.Sprintf("eventlog: append of %d event(s) to stream %q may be incomplete (re-submit AppendError.Events, not new ids): %v",
		len(e.Events), e.Stream, e.Err)
}

// Is makes errors.Is(err, ErrAppendIncomplete) true.
func (e *AppendError[U]) Is(target error) bool { return target == ErrAppendIncomplete }

// Unwrap returns the write's error.
func (e *AppendError[U]) Unwrap() error { return e.Err }

// Config is a Log's settings but its retry policy (the adapter's).
type Config struct {
	Width      time.Duration
	MaxPayload int
	MaxFuture  time.Duration
	MaxBatch   int
	Writer     string
	PageSize   int
	Now        func() time.Time
}

// Option sets one setting; an invalid value is an error.
type Option func(*Config) error

// Defaults: one-day buckets, payloads up to 1 MiB, event times up to 1 hour in the
// future, at most 100 events per batch, writer hostname:pid, pages of 1000 rows.
func Defaults() Config {
	host, _ := os.Hostname()
	return Config{Width: 24 * time.Hour, MaxPayload: 1 << 20, MaxFuture: time.Hour, MaxBatch: 100,
		Writer: fmt.Sprintf("%s:%d", host, os.Getpid()), PageSize: 1000, Now: time.Now}
}

func WithBucketWidth(d time.Duration) Option {
	return func(c *Config) error {
		if d < time.Second {
			return fmt.Errorf("eventlog: bucket width %v below 1s", d)
		}
		c.Width = d
		return nil
	}
}

func WithMaxPayload(n int) Option {
	return func(c *Config) error {
		if n < 1 {
			return fmt.Errorf("eventlog: max payload %d", n)
		}
		c.MaxPayload = n
		return nil
	}
}

func WithMaxFuture(d time.Duration) Option {
	return func(c *Config) error {
		if d < 0 {
			return fmt.Errorf("eventlog: max future %v", d)
		}
		c.MaxFuture = d
		return nil
	}
}

func WithWriter(id string) Option { return func(c *Config) error { c.Writer = id; return nil } }

func WithPageSize(n int) Option {
	return func(c *Config) error {
		if n < 1 {
			return fmt.Errorf("eventlog: page size %d", n)
		}
		c.PageSize = n
		return nil
	}
}

func WithMaxBatch(n int) Option {
	return func(c *Config) error {
		if n < 1 {
			return fmt.Errorf("eventlog: max batch %d", n)
		}
		c.MaxBatch = n
		return nil
	}
}

// Log is the driver-free state of one event log table.
type Log struct {
	Keyspace, Table string
	Cfg             Config

	indexMu sync.Mutex
	indexed map[bucketKey]time.Time

	ttlMu     sync.Mutex
	ttlIndex  int
	ttlLoaded bool

	InsertCQL, IndexCQL           string
	BucketsAscCQL, BucketsDescCQL string
	ReadCQL                       [2][4]string // [desc][bounds] (none, from, to, both)
	TTLCQL                        string       // the events table's default_time_to_live
}

// New checks the names and builds the statements.
func New(keyspace, table string, c Config) (*Log, error) {
	for _, n := range []string{keyspace, table, table + "_buckets"} {
		if err := cqltext.ValidName(n); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidName, err)
		}
	}
	l := &Log{Keyspace: keyspace, Table: table, Cfg: c}
	q := cqltext.QuoteQualified(keyspace, table)
	qi := cqltext.QuoteQualified(keyspace, table+"_buckets")
	l.InsertCQL = "INSERT INTO " + q + " (stream_id, bucket, event_id, type, payload, metadata, writer) VALUES (?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?"
	l.IndexCQL = "INSERT INTO " + qi + " (stream_id, bucket) VALUES (?, ?) USING TIMESTAMP ? AND TTL ?"
	l.BucketsAscCQL = "SELECT bucket FROM " + qi + " WHERE stream_id = ? AND bucket >= ? AND bucket <= ? ORDER BY bucket ASC"
	l.BucketsDescCQL = "SELECT bucket FROM " + qi + " WHERE stream_id = ? AND bucket >= ? AND bucket <= ? ORDER BY bucket DESC"
	for d, dir := range []string{"ASC", "DESC"} {
		base := "SELECT event_id, type, payload, metadata, writer FROM " + q + " WHERE stream_id = ? AND bucket = ?"
		l.ReadCQL[d][0] = base + " ORDER BY event_id " + dir
		l.ReadCQL[d][1] = base + " AND event_id >= ? ORDER BY event_id " + dir
		l.ReadCQL[d][2] = base + " AND event_id <= ? ORDER BY event_id " + dir
		l.ReadCQL[d][3] = base + " AND event_id >= ? AND event_id <= ? ORDER BY event_id " + dir
	}
	l.TTLCQL = `SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?`
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

// IndexTTL returns the TTL index rows are written with: 0 (never expire) when the
// events table has no default_time_to_live, else that TTL plus indexMargin. read reads
// the table's default_time_to_live (found false: no such table), once per Log.
func (l *Log) IndexTTL(read func() (ttl int, found bool, err error)) (int, error) {
	l.ttlMu.Lock()
	defer l.ttlMu.Unlock()
	if l.ttlLoaded {
		return l.ttlIndex, nil
	}
	ttl, found, err := read()
	if err != nil {
		return 0, fmt.Errorf("eventlog: read the TTL of %s.%s: %w", l.Keyspace, l.Table, err)
	}
	if !found {
		return 0, fmt.Errorf("eventlog: table %s.%s does not exist", l.Keyspace, l.Table)
	}
	if ttl > 0 {
		ttl = min(ttl+int(indexMargin/time.Second), maxTTL)
	}
	l.ttlIndex, l.ttlLoaded = ttl, true
	return ttl, nil
}

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

// Prepare validates events for an append to stream and assigns ID, Time, Bucket and
// Writer (see the adapters' Append). On bad input it returns an error and nothing may
// be written.
func Prepare[U UUID](l *Log, stream string, events []Event[U]) ([]Event[U], error) {
	if stream == "" {
		return nil, ErrEmptyStream
	}
	out := make([]Event[U], len(events))
	now := l.Cfg.Now()
	var zero U
	for i, e := range events {
		hasID := e.ID != zero
		if hasID && e.ID.Version() != 1 {
			return nil, fmt.Errorf("%w: event %d: id %s is not a TimeUUID", ErrBadTime, i, e.ID)
		}
		if hasID && e.Time.IsZero() {
			e.Time = e.ID.Time()
		}
		switch {
		case e.Time.IsZero():
			return nil, fmt.Errorf("%w: event %d has no time", ErrBadTime, i)
		case e.Time.After(now.Add(l.Cfg.MaxFuture)):
			return nil, fmt.Errorf("%w: event %d at %v is more than %v ahead", ErrBadTime, i, e.Time, l.Cfg.MaxFuture)
		case len(e.Payload) > l.Cfg.MaxPayload:
			return nil, fmt.Errorf("%w: event %d has %d bytes, limit %d", ErrPayloadTooLarge, i, len(e.Payload), l.Cfg.MaxPayload)
		}
		if hasID {
			// Reads find an event by its id's time (bucket and event_id bounds alike): an
			// id of another time would be stored where bounded reads do not look.
			if d := e.Time.Sub(e.ID.Time()); d < 0 || d >= 100*time.Nanosecond {
				return nil, fmt.Errorf("%w: event %d: id %s is of %v, event time %v", ErrIDTimeMismatch, i, e.ID, e.ID.Time(), e.Time)
			}
		} else if e.Key != nil {
			e.ID = U(clientid.TimeUUIDFromKey(e.Time, e.Key))
		} else {
			e.ID = U(clientid.NewTimeUUID(e.Time))
		}
		e.Time = e.ID.Time()
		b, err := clientid.Bucket(e.Time, l.Cfg.Width)
		if err != nil {
			return nil, fmt.Errorf("%w: event %d: %v", ErrBadTime, i, err)
		}
		e.Stream = stream
		e.Bucket = b
		if e.Writer == "" {
			e.Writer = l.Cfg.Writer
		}
		out[i] = e
	}
	return out, nil
}

// Writer is how an adapter executes an append's statements.
type Writer[U UUID] struct {
	// Index writes a bucket's index row (IndexCQL) at timestamp ts with TTL ttl.
	Index func(stream string, bucket, ts int64, ttl int) error
	// Batch writes events of one bucket in one unlogged batch of InsertCQL, pinned at
	// timestamp ts (the last event's time).
	Batch func(stream string, bucket int64, events []Event[U], ts int64) error
}

// Write appends validated events bucket by bucket: in time order inside each, the
// bucket's index row first (unless written recently), then batches of at most
// MaxBatch events. indexTTL is IndexTTL's answer.
func Write[U UUID](l *Log, stream string, events []Event[U], indexTTL int, w Writer[U]) error {
	byBucket := map[int64][]Event[U]{}
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
		slices.SortFunc(evs, func(x, y Event[U]) int { return clientid.Compare([16]byte(x.ID), [16]byte(y.ID)) })
		for start := 0; start < len(evs); start += l.Cfg.MaxBatch {
			// The index entry first: a reader that sees events of a bucket can find it.
			// Checked per batch: with a TTL the entry must be fresh when the events land.
			if !l.knownBucket(stream, b, indexTTL) {
				bstart, _ := clientid.BucketStart(b, l.Cfg.Width)
				// The bucket's start as write timestamp: every writer writes the same row.
				// At equal timestamps the later expiry wins, so a re-write extends its life.
				ts := max(bstart.UnixMicro(), 1)
				written := time.Now()
				if err := w.Index(stream, b, ts, indexTTL); err != nil {
					return fmt.Errorf("eventlog: index bucket %d: %w", b, err)
				}
				l.rememberBucket(stream, b, written)
			}
			chunk := evs[start:min(start+l.Cfg.MaxBatch, len(evs))]
			if err := w.Batch(stream, b, chunk, chunk[len(chunk)-1].Time.UnixMicro()); err != nil {
				return fmt.Errorf("eventlog: append to bucket %d: %w", b, err)
			}
		}
	}
	return nil
}

// ReadConfig is a Read's options.
type ReadConfig struct {
	Backward bool
	From, To time.Time
	Limit    int
}

// ReadOption narrows or orders a Read.
type ReadOption func(*ReadConfig) error

func Backward() ReadOption { return func(c *ReadConfig) error { c.Backward = true; return nil } }
func From(t time.Time) ReadOption {
	return func(c *ReadConfig) error { c.From = t; return nil }
}
func To(t time.Time) ReadOption { return func(c *ReadConfig) error { c.To = t; return nil } }
func Limit(n int) ReadOption {
	return func(c *ReadConfig) error {
		if n < 1 {
			return fmt.Errorf("eventlog: limit %d: want at least 1", n)
		}
		c.Limit = n
		return nil
	}
}

// ReadPlan is what a Read queries: the buckets statement and its bounds, and the
// events statement with its extra bound values (TimeUUID bounds as [16]byte: the
// adapter converts them to its UUID).
type ReadPlan struct {
	BucketsCQL string
	Lo, Hi     int64
	EventsCQL  string
	Bounds     [][16]byte
	Limit      int
}

// PlanRead folds opts and plans the read of stream; the error is the first the Read
// yields.
func (l *Log) PlanRead(stream string, opts []ReadOption) (ReadPlan, error) {
	var rc ReadConfig
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&rc); err != nil {
			return ReadPlan{}, err
		}
	}
	if stream == "" {
		return ReadPlan{}, ErrEmptyStream
	}
	p := ReadPlan{Lo: math.MinInt64, Hi: math.MaxInt64, BucketsCQL: l.BucketsAscCQL, Limit: rc.Limit}
	if !rc.From.IsZero() {
		b, err := clientid.Bucket(rc.From, l.Cfg.Width)
		if err != nil {
			return ReadPlan{}, err
		}
		p.Lo = b
	}
	if !rc.To.IsZero() {
		b, err := clientid.Bucket(rc.To, l.Cfg.Width)
		if err != nil {
			return ReadPlan{}, err
		}
		p.Hi = b
	}
	dir := 0
	if rc.Backward {
		p.BucketsCQL, dir = l.BucketsDescCQL, 1
	}
	bounds := 0
	if !rc.From.IsZero() {
		bounds |= 1
		p.Bounds = append(p.Bounds, clientid.MinTimeUUID(rc.From))
	}
	if !rc.To.IsZero() {
		bounds |= 2
		p.Bounds = append(p.Bounds, clientid.MaxTimeUUID(rc.To))
	}
	p.EventsCQL = l.ReadCQL[dir][bounds]
	return p, nil
}
