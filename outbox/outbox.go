package outbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

// ErrValue is returned by Outbox.Append for a bound value it cannot store.
var ErrValue = errors.New("outbox: cannot store value")

// ErrLocked is returned by Open when another Outbox (in this or another
// process) has the file open.
var ErrLocked = errors.New("outbox: is open elsewhere")

// ErrCorrupt is matched by *CorruptError.
var ErrCorrupt = errors.New("outbox: file is corrupt")

// CorruptError is returned by Open when the file holds a damaged record that
// is not a torn tail (intact data follows it). The file is left untouched: cutting it
// there would discard the records after the damage.
type CorruptError struct {
	Path   string
	Offset int64 // of the first damaged record
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("outbox: %s is corrupt at offset %d (not a torn tail: data follows)", e.Path, e.Offset)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Outbox is a retry.Recorder: a local file of idempotent writes whose outcome stayed unknown, kept to be
// replayed later with their original timestamps. Because each write is idempotent and
// re-sent with the timestamp it was first pinned to, replaying it any number of times
// has the effect of applying it once, and it never overwrites a newer write. A TTL is
// replayed as what remains of it, so the cells expire when the first attempt's would have
// (see the package doc).
//
// Only idempotent writes are stored, and Replay checks again. Append refuses a write
// marked not idempotent (the Policy's verdict, made with its schema and the bound
// values) and a COUNTER batch. Replay judges each record anew with the Policy it is
// given, the record's values and the schema (the Policy's, else the session's), and
// never sends one that is not idempotent — counters, list appends, LWTs, server-side
// functions, whole-list assignment of a non-frozen list (a repeat duplicates the
// elements) — however it got into the file; it stays pending. (Append does not
// re-judge without schema: that would refuse writes such as set additions that the
// Policy, knowing the column types, rightly stored.)
//
// Batches are replayed with the type they were recorded with (BatchType). A batch whose
// type is not known (records written before the type was stored; an
// retry.OutcomeUnknownError built by hand, whose zero BatchType is LoggedBatch) is replayed
// LOGGED: if the original was logged its atomicity is kept; if it was unlogged the end
// state is the same (Cassandra skips the batch log for a single-partition batch).
//
// Each record is length-prefixed and CRC-32C checked, and Append fsyncs before it
// returns. A crash in the middle of an append leaves a torn tail, which Open
// detects and cuts off: records appended before it are intact. Damage followed by intact
// data is not cut: Open returns an *CorruptError.
//
// One Outbox at a time may have a file open: Open takes an exclusive lock (flock
// on path+".lock", on Unix) held until Close, so another process or a second
// Open gets ErrLocked. Where flock is unavailable the caller must ensure it.
// Within the process an Outbox is safe for concurrent use, and records appended while
// Replay runs are kept.
//
// Stored values: nil, gocql.UnsetValue, bool, string, []byte, all int and uint sizes,
// float32/64, time.Time, time.Duration and gocql.UUID. Anything else is refused.
type Outbox struct {
	replayMu sync.Mutex // one Replay at a time: each rewrites the file

	mu   sync.Mutex // guards f and size
	path string
	f    *os.File
	size int64 // end of the last intact record: where the next append goes
	lock io.Closer
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	recordHeader = 8 // payload length, CRC-32C of the payload (big-endian uint32 each)
	maxRecord    = 64 << 20
)

type outboxRecord struct {
	Batch bool `json:"batch,omitempty"`
	// Type is the batch type: "logged", "unlogged" or "counter"; empty for a single
	// statement and in records written before it was stored (replayed LOGGED).
	Type       string       `json:"type,omitempty"`
	Timestamp  int64        `json:"ts"`
	Statements []outboxStmt `json:"stmts"`
	Recorded   time.Time    `json:"recorded"`
	Err        string       `json:"err,omitempty"`
}

type outboxStmt struct {
	CQL    string        `json:"cql"`
	Values []outboxValue `json:"values,omitempty"`
}

type outboxValue struct {
	T string `json:"t"`
	V string `json:"v,omitempty"`
}

// rawRecord is one framed record as found in the file.
type rawRecord struct{ payload []byte }

func (r rawRecord) size() int64 { return recordHeader + int64(len(r.payload)) }

// Open opens (creating) the outbox file at path, locks it, and cuts off a torn
// tail.
func Open(path string) (*Outbox, error) {
	lock, err := lockOutbox(path + ".lock")
	if err != nil {
		return nil, err
	}
	// A temporary file left by a Replay that crashed before its rename: the outbox file
	// itself is still complete.
	_ = os.Remove(path + ".tmp")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("outbox: open: %w", err)
	}
	fail := func(err error) (*Outbox, error) {
		f.Close()
		lock.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("outbox: open: %w", err))
	}
	_, good, torn, err := scanRecords(f, st.Size())
	if err != nil {
		return fail(fmt.Errorf("outbox: read: %w", err))
	}
	if good < st.Size() {
		if !torn {
			return fail(&CorruptError{Path: path, Offset: good})
		}
		if err := f.Truncate(good); err != nil {
			return fail(fmt.Errorf("outbox: cut torn tail: %w", err))
		}
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("outbox: fsync: %w", err))
		}
	}
	return &Outbox{path: path, f: f, size: good, lock: lock}, nil
}

// Close closes the file and releases its lock.
func (o *Outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return nil
	}
	err := o.f.Close()
	o.f = nil
	if lerr := o.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

// Append durably records a write whose outcome is unknown. Writes that are not
// idempotent — marked so, or a COUNTER batch — are refused (retry.ErrNotIdempotent):
// replaying them could apply them twice.
func (o *Outbox) Append(e *retry.OutcomeUnknownError) error {
	if e == nil {
		return errors.New("outbox: nil record")
	}
	rec, err := encodeRecord(e)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if len(payload) > maxRecord {
		return fmt.Errorf("outbox: record of %d bytes is over the %d limit", len(payload), maxRecord)
	}
	buf := frame(payload)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return errors.New("outbox: is closed")
	}
	if _, err := o.f.WriteAt(buf, o.size); err != nil {
		o.cutBack()
		return fmt.Errorf("outbox: append: %w", err)
	}
	if err := o.f.Sync(); err != nil {
		o.cutBack()
		return fmt.Errorf("outbox: fsync: %w", err)
	}
	o.size += int64(len(buf))
	return nil
}

// cutBack removes what a failed append may have left past o.size, so the next append
// does not land behind a torn record (which would hide it from every later read).
func (o *Outbox) cutBack() {
	if o.f.Truncate(o.size) == nil {
		_ = o.f.Sync()
	}
}

func frame(payload []byte) []byte {
	buf := make([]byte, recordHeader, recordHeader+len(payload))
	binary.BigEndian.PutUint32(buf[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(buf[4:8], crc32.Checksum(payload, castagnoli))
	return append(buf, payload...)
}

// encodeRecord checks e is safe to replay and converts it to its stored form.
func encodeRecord(e *retry.OutcomeUnknownError) (outboxRecord, error) {
	if !e.Idempotent {
		return outboxRecord{}, fmt.Errorf("%w: outbox refuses it", retry.ErrNotIdempotent)
	}
	if err := replayable(e, e.BatchType); err != nil {
		return outboxRecord{}, err
	}
	rec := outboxRecord{Batch: e.Batch, Timestamp: e.Timestamp, Recorded: time.Now().UTC()}
	if e.Batch {
		rec.Type = batchTypeName[e.BatchType] // zero value LoggedBatch: the safe type when unset
	}
	if e.Err != nil {
		rec.Err = e.Err.Error()
	}
	for _, s := range e.Statements {
		st := outboxStmt{CQL: s.CQL}
		for _, v := range s.Values {
			ev, err := encodeValue(v)
			if err != nil {
				return outboxRecord{}, err
			}
			st.Values = append(st.Values, ev)
		}
		rec.Statements = append(rec.Statements, st)
	}
	return rec, nil
}

var batchTypeName = map[gocql.BatchType]string{
	gocql.LoggedBatch:   "logged",
	gocql.UnloggedBatch: "unlogged",
	gocql.CounterBatch:  "counter",
}

// decodeRecord parses a stored record back into the write it describes and its batch
// type (LoggedBatch when not recorded).
func decodeRecord(payload []byte) (*retry.OutcomeUnknownError, gocql.BatchType, error) {
	var r outboxRecord
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, 0, fmt.Errorf("outbox: bad record: %w", err)
	}
	typ := gocql.LoggedBatch
	switch r.Type {
	case "", "logged":
	case "unlogged":
		typ = gocql.UnloggedBatch
	case "counter":
		typ = gocql.CounterBatch
	default:
		return nil, 0, fmt.Errorf("outbox: unknown batch type %q", r.Type)
	}
	e := &retry.OutcomeUnknownError{Batch: r.Batch, Timestamp: r.Timestamp, Idempotent: true}
	if r.Batch {
		e.BatchType = typ
	}
	if r.Err != "" {
		e.Err = errors.New(r.Err)
	}
	for _, s := range r.Statements {
		st := retry.Statement{CQL: s.CQL}
		for _, v := range s.Values {
			dv, err := decodeValue(v)
			if err != nil {
				return nil, 0, err
			}
			st.Values = append(st.Values, dv)
		}
		e.Statements = append(e.Statements, st)
	}
	return e, typ, nil
}

// snapshot returns the records in the file and the offset they end at.
func (o *Outbox) snapshot() ([]rawRecord, int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return nil, 0, errors.New("outbox: is closed")
	}
	recs, good, _, err := scanRecords(io.NewSectionReader(o.f, 0, o.size), o.size)
	if err != nil {
		return nil, 0, fmt.Errorf("outbox: read: %w", err)
	}
	if good != o.size {
		return nil, 0, &CorruptError{Path: o.path, Offset: good}
	}
	return recs, good, nil
}

// Pending returns the recorded writes, oldest first.
func (o *Outbox) Pending() ([]*retry.OutcomeUnknownError, error) {
	recs, _, err := o.snapshot()
	if err != nil {
		return nil, err
	}
	out := make([]*retry.OutcomeUnknownError, 0, len(recs))
	for _, r := range recs {
		e, _, err := decodeRecord(r.payload)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// ReplayReport says what one Replay did with the records it read.
type ReplayReport struct {
	Applied int // sent and applied, then removed (Replay's count)
	Expired int // removed unsent: every write in them had a TTL that ran out since the first attempt
	Kept    int // left in the outbox: refused, failed, or not reached

	// Of Applied: sent with TTLs shortened by the time since the first attempt.
	Shortened int
	// Of Applied: sent with a TTL as recorded, which may outlive the first attempt's:
	// the record's timestamp is in the future, or a statement's TTL could not be read.
	TTLAsRecorded int
}

// ReplayOption configures one Replay. An invalid value is an error from Replay, before
// anything is sent.
type ReplayOption func(*replayConfig) error

type replayConfig struct {
	report *ReplayReport
}

// ReportTo makes Replay fill in *r (when it returns, whatever the error).
func ReportTo(r *ReplayReport) ReplayOption {
	return func(c *replayConfig) error {
		if r == nil {
			return errors.New("outbox: ReportTo(nil)")
		}
		c.report = r
		return nil
	}
}

// Replay re-applies the recorded writes, oldest first, each with its original timestamp
// and batch type, through p's retries (a nil p is retry.NewPolicy()), and removes the ones
// applied. It returns how many were applied; ReportTo gives the details.
//
// A record Replay will not send stays in the outbox and is reported in the error, and
// Replay goes on with the next: one that p classifies not idempotent or a COUNTER batch
// (errors.Is retry.ErrNotIdempotent), or one it cannot decode. On the first write that fails
// (or when ctx is done) it stops, keeping that record and the rest: a later Replay
// re-sends them, which is harmless (same statements, same timestamps).
//
// Writes with a TTL are replayed with what remains of it (see the package doc), and a
// record whose every write has run out of TTL is removed without being sent
// (ReplayReport.Expired). A table's default_time_to_live is read from
// system_schema.tables (gocql's metadata does not expose it); failing to read it fails
// the replay like a failed write.
//
// Records appended while Replay runs are kept: Replay only removes records it applied.
//
// Records do not store a keyspace: statements that name none run in s's keyspace, so
// replay with a session on the keyspace the writes were made in.
func (o *Outbox) Replay(ctx context.Context, s *gocql.Session, p *retry.Policy, opts ...ReplayOption) (int, error) {
	var cfg replayConfig
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&cfg); err != nil {
			return 0, err
		}
	}
	if cfg.report != nil {
		*cfg.report = ReplayReport{}
	}
	if s == nil {
		return 0, errors.New("outbox: replay: nil session")
	}
	if p == nil {
		p = retry.NewPolicy()
	}
	// Replays go through p's retries, without an outbox (a replay that stays unknown
	// stays in this one), and with the session's schema when p has none.
	ropts := []retry.Option{retry.WithPolicy(p), retry.WithOutbox(nil)}
	if p.Schema() == nil {
		ropts = append(ropts, retry.WithSchema(retry.SessionSchema(s)))
	}
	rp := retry.NewPolicy(ropts...)
	if err := rp.Err(); err != nil {
		return 0, err
	}
	q := s.Query("")
	ks := q.Keyspace() // where statements that name no keyspace run
	q.Release()
	defaults := map[[2]string]int{} // default_time_to_live by keyspace and table, read once per Replay
	return o.replay(ctx, cfg.report, func(ctx context.Context, e *retry.OutcomeUnknownError, typ gocql.BatchType) (ttlNote, error) {
		tableTTL := func(ks, table string) (int, error) {
			key := [2]string{ks, table}
			if d, ok := defaults[key]; ok {
				return d, nil
			}
			d, err := readDefaultTTL(ctx, s, ks, table)
			if err != nil {
				return 0, err
			}
			defaults[key] = d
			return d, nil
		}
		stmts, note, err := replayTTL(e, time.Now().UnixMicro(), ks, tableTTL)
		if err != nil || note == ttlExpired {
			return note, err
		}
		// Judged again here, with its values and the schema, whatever the record says:
		// it may come from an older version or a hand edit, and a repeat of a
		// non-idempotent write (a non-frozen list assignment duplicates the elements) is
		// exactly what replay must not do. OnlyIfRepeatable sends nothing then.
		at := []retry.ExecOption{retry.AtTimestamp(e.Timestamp), retry.OnlyIfRepeatable()}
		if e.Batch {
			b := s.NewBatch(typ)
			for _, st := range stmts {
				b.Query(st.CQL, st.Values...)
			}
			return note, rp.ExecBatch(ctx, s, b, at...)
		}
		st := stmts[0]
		return note, rp.Exec(ctx, s.Query(st.CQL, st.Values...), at...)
	})
}

// readDefaultTTL reads a table's default_time_to_live: 0 (none) for a table it does not
// find, whose writes fail on their own.
func readDefaultTTL(ctx context.Context, s *gocql.Session, ks, table string) (int, error) {
	if ks == "" || table == "" {
		return 0, nil
	}
	var d int
	err := s.Query(`SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?`, ks, table).
		WithContext(ctx).Scan(&d)
	if errors.Is(err, gocql.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("outbox: read default_time_to_live of %s.%s: %w", ks, table, err)
	}
	return d, nil
}

// ttlNote says what a replay did with a record's TTLs.
type ttlNote int

const (
	ttlNoTTL      ttlNote = iota // no TTL in it, or TTLs of 0
	ttlShortened                 // sent with TTLs shortened (or expired statements left out)
	ttlAsRecorded                // sent with a TTL as recorded: future timestamp, or unreadable TTL
	ttlExpired                   // every write in it had run out of TTL: not sent
)

// replayTTL returns the statements of e to send at now (µs since the epoch) so that
// their cells expire when the first attempt's would have: each TTL less the whole
// seconds since e.Timestamp, rounded up. Statements whose TTL ran out are left out; if
// none is left the record is ttlExpired.
func replayTTL(e *retry.OutcomeUnknownError, now int64, ks string, tableTTL func(ks, table string) (int, error)) ([]retry.Statement, ttlNote, error) {
	elapsed, ok := elapsedSeconds(e.Timestamp, now)
	if !ok {
		// A timestamp ahead of this clock tells nothing about when the write was first
		// sent: send it as recorded, noting whether that keeps a TTL.
		for _, st := range e.Statements {
			r, err := shortenTTL(st.CQL, st.Values, ks, 0, tableTTL)
			if err != nil {
				return nil, 0, err
			}
			if r.changed || r.unknown {
				return e.Statements, ttlAsRecorded, nil
			}
		}
		return e.Statements, ttlNoTTL, nil
	}
	note := ttlNoTTL
	var out []retry.Statement
	for _, st := range e.Statements {
		r, err := shortenTTL(st.CQL, st.Values, ks, elapsed, tableTTL)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case r.expired:
			note = max(note, ttlShortened)
			continue
		case r.unknown:
			note = ttlAsRecorded
		case r.changed:
			note = max(note, ttlShortened)
		}
		out = append(out, retry.Statement{CQL: r.cql, Values: r.values})
	}
	if len(out) == 0 {
		return nil, ttlExpired, nil
	}
	return out, note, nil
}

// applyFunc sends one record and says what it did with its TTLs. It returns an error
// matching retry.ErrNotIdempotent, without sending anything, for a record it refuses,
// and ttlExpired, without sending anything, for one whose TTLs all ran out.
type applyFunc func(ctx context.Context, e *retry.OutcomeUnknownError, typ gocql.BatchType) (ttlNote, error)

func (o *Outbox) replay(ctx context.Context, rep *ReplayReport, apply applyFunc) (int, error) {
	if rep == nil {
		rep = new(ReplayReport)
	}
	o.replayMu.Lock()
	defer o.replayMu.Unlock()
	recs, end, err := o.snapshot()
	if err != nil {
		return 0, err
	}
	var errs []error
	var keep []rawRecord
	done := 0 // applied or expired: removed
	for i, r := range recs {
		fail := func(err error) {
			errs = append(errs, fmt.Errorf("outbox: replay %d of %d: %w", i+1, len(recs), err))
		}
		if err := ctx.Err(); err != nil {
			fail(err)
			keep = append(keep, recs[i:]...)
			break
		}
		e, typ, err := decodeRecord(r.payload)
		if err == nil {
			err = replayable(e, typ)
		}
		var note ttlNote
		if err == nil {
			note, err = apply(ctx, e, typ)
			if err != nil && !errors.Is(err, retry.ErrNotIdempotent) {
				fail(err)
				keep = append(keep, recs[i:]...)
				break
			}
		}
		if err != nil {
			fail(err)
			keep = append(keep, r)
			continue
		}
		done++
		switch note {
		case ttlExpired:
			rep.Expired++
			continue
		case ttlShortened:
			rep.Shortened++
		case ttlAsRecorded:
			rep.TTLAsRecorded++
		}
		rep.Applied++
	}
	rep.Kept = len(keep)
	if done > 0 {
		if err := o.rewrite(keep, end); err != nil {
			errs = append(errs, err)
		}
	}
	return rep.Applied, errors.Join(errs...)
}

// replayable refuses a record that must not be sent again (Append stores none, Replay
// sends none).
func replayable(e *retry.OutcomeUnknownError, typ gocql.BatchType) error {
	if len(e.Statements) == 0 || (!e.Batch && len(e.Statements) != 1) {
		return fmt.Errorf("outbox: record with %d statement(s) (batch %v)", len(e.Statements), e.Batch)
	}
	if e.Batch && typ == gocql.CounterBatch {
		return fmt.Errorf("%w: COUNTER batch", retry.ErrNotIdempotent)
	}
	if _, ok := batchTypeName[typ]; e.Batch && !ok {
		return fmt.Errorf("outbox: unknown batch type %d", typ)
	}
	// Without its original timestamp a replay would be stamped anew and could
	// overwrite a newer write.
	if e.Timestamp == 0 {
		return errors.New("outbox: record without a pinned timestamp")
	}
	return nil
}

// rewrite replaces the file by keep (records of the snapshot that ends at end, not
// applied) followed by everything appended after end. It writes a new file and renames
// it over the old one, so a crash leaves either file whole: at worst applied records
// come back and are re-sent, which is harmless.
func (o *Outbox) rewrite(keep []rawRecord, end int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return errors.New("outbox: is closed")
	}
	tail := make([]byte, o.size-end)
	if _, err := o.f.ReadAt(tail, end); err != nil && !(errors.Is(err, io.EOF) && len(tail) == 0) {
		return fmt.Errorf("outbox: read appended records: %w", err)
	}
	tmp := o.path + ".tmp"
	nf, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: rewrite: %w", err)
	}
	fail := func(err error) error {
		nf.Close()
		os.Remove(tmp)
		return fmt.Errorf("outbox: rewrite: %w", err)
	}
	w := bufio.NewWriter(nf)
	var size int64
	for _, r := range keep {
		w.Write(frame(r.payload))
		size += r.size()
	}
	w.Write(tail)
	size += int64(len(tail))
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if err := nf.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, o.path); err != nil {
		return fail(err)
	}
	o.f.Close()
	o.f, o.size = nf, size
	// The rename must be durable before later appends to the new file are acknowledged,
	// or a crash could bring back the old file without them.
	if err := syncDir(filepath.Dir(o.path)); err != nil {
		return fmt.Errorf("outbox: rewrite: sync directory: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// scanRecords reads the framed records of r, which holds size bytes. It returns them
// with the offset just past the last intact one, and whether what follows it (if
// anything) looks like a torn tail — a record cut short or zero-filled by a crash in
// the middle of an append — rather than damage followed by intact data.
// It reads only the framing and checksums; payloads are decoded by decodeRecord.
func scanRecords(r io.Reader, size int64) (recs []rawRecord, good int64, torn bool, err error) {
	br := bufio.NewReader(r)
	var hdr [recordHeader]byte
	for {
		rest := size - good
		if rest == 0 {
			return recs, good, true, nil
		}
		if rest < recordHeader {
			return recs, good, true, nil
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, 0, false, err
		}
		n := int64(binary.BigEndian.Uint32(hdr[0:4]))
		if n > maxRecord {
			return recs, good, false, nil // Append never writes one: damage, not a torn append
		}
		if recordHeader+n > rest {
			return recs, good, true, nil // an append cut short
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return nil, 0, false, err
		}
		if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(hdr[4:8]) || n == 0 {
			// The last record in the file, or zeros to the end: a torn append.
			torn := recordHeader+n == rest || (isZero(hdr[:]) && isZero(payload) && restZero(br))
			return recs, good, torn, nil
		}
		recs = append(recs, rawRecord{payload: payload})
		good += recordHeader + n
	}
}

func isZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }

func restZero(r io.Reader) bool {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if !isZero(buf[:n]) {
			return false
		}
		if err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

func encodeValue(v any) (outboxValue, error) {
	if v == any(gocql.UnsetValue) {
		return outboxValue{T: "unset"}, nil
	}
	switch x := v.(type) {
	case nil:
		return outboxValue{T: "null"}, nil
	case bool:
		if x {
			return outboxValue{T: "bool", V: "1"}, nil
		}
		return outboxValue{T: "bool", V: "0"}, nil
	case string:
		return outboxValue{T: "string", V: x}, nil
	case []byte:
		return outboxValue{T: "bytes", V: base64.StdEncoding.EncodeToString(x)}, nil
	case int:
		return outboxValue{T: "int", V: strconv.FormatInt(int64(x), 10)}, nil
	case int8:
		return outboxValue{T: "int8", V: strconv.FormatInt(int64(x), 10)}, nil
	case int16:
		return outboxValue{T: "int16", V: strconv.FormatInt(int64(x), 10)}, nil
	case int32:
		return outboxValue{T: "int32", V: strconv.FormatInt(int64(x), 10)}, nil
	case int64:
		return outboxValue{T: "int64", V: strconv.FormatInt(x, 10)}, nil
	case uint8:
		return outboxValue{T: "uint8", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint16:
		return outboxValue{T: "uint16", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint32:
		return outboxValue{T: "uint32", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint64:
		return outboxValue{T: "uint64", V: strconv.FormatUint(x, 10)}, nil
	case float32:
		return outboxValue{T: "float32", V: strconv.FormatUint(uint64(math.Float32bits(x)), 10)}, nil
	case float64:
		return outboxValue{T: "float64", V: strconv.FormatUint(math.Float64bits(x), 10)}, nil
	case time.Time:
		return outboxValue{T: "time", V: x.UTC().Format(time.RFC3339Nano)}, nil
	case time.Duration:
		return outboxValue{T: "duration", V: strconv.FormatInt(int64(x), 10)}, nil
	case gocql.UUID:
		return outboxValue{T: "uuid", V: x.String()}, nil
	}
	return outboxValue{}, fmt.Errorf("%w of type %T", ErrValue, v)
}

// decodeValue is strict: a value out of its type's range or with trailing text is an
// error, never silently wrapped or cut.
func decodeValue(v outboxValue) (any, error) {
	parseI := func(bits int) (int64, error) { return strconv.ParseInt(v.V, 10, bits) }
	parseU := func(bits int) (uint64, error) { return strconv.ParseUint(v.V, 10, bits) }
	var (
		i   int64
		u   uint64
		out any
		err error
	)
	switch v.T {
	case "null":
		return nil, nil
	case "unset":
		return gocql.UnsetValue, nil
	case "bool":
		if v.V != "0" && v.V != "1" {
			err = errors.New("not 0 or 1")
		}
		out = v.V == "1"
	case "string":
		out = v.V
	case "bytes":
		out, err = base64.StdEncoding.DecodeString(v.V)
	case "int":
		i, err = parseI(strconv.IntSize)
		out = int(i)
	case "int8":
		i, err = parseI(8)
		out = int8(i)
	case "int16":
		i, err = parseI(16)
		out = int16(i)
	case "int32":
		i, err = parseI(32)
		out = int32(i)
	case "int64":
		out, err = parseI(64)
	case "uint8":
		u, err = parseU(8)
		out = uint8(u)
	case "uint16":
		u, err = parseU(16)
		out = uint16(u)
	case "uint32":
		u, err = parseU(32)
		out = uint32(u)
	case "uint64":
		out, err = parseU(64)
	case "float32":
		u, err = parseU(32)
		out = math.Float32frombits(uint32(u))
	case "float64":
		u, err = parseU(64)
		out = math.Float64frombits(u)
	case "time":
		out, err = time.Parse(time.RFC3339Nano, v.V)
	case "duration":
		i, err = parseI(64)
		out = time.Duration(i)
	case "uuid":
		out, err = gocql.ParseUUID(v.V)
	default:
		return nil, fmt.Errorf("outbox: unknown value type %q", v.T)
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: bad %s value %q: %w", v.T, v.V, err)
	}
	return out, nil
}
