package outbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
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
// Stored values are those gocql marshals without help, each replayed as a value that
// marshals to the same bytes: nil, gocql.UnsetValue, bool, string, []byte, every int,
// uint and float size, time.Time, time.Duration, gocql.UUID ([16]byte too),
// gocql.Duration, *big.Int, *inf.Dec, net.IP; named types of those kinds; pointers (nil
// is NULL); slices and arrays — lists, sets, tuples, vectors — replayed as []any; maps,
// replayed as map[string]any when the keys are strings (so a UDT given as a map works
// too), else map[any]any, with scalar keys. Anything else — a struct, a type with its own
// MarshalCQL — is refused with ErrValue, before anything is written to the file.
type Outbox[B comparable] struct {
	d *Driver[B]

	replayMu sync.Mutex // one Replay at a time: each rewrites the file

	mu   sync.Mutex // guards f and size
	path string
	f    *os.File
	size int64 // end of the last intact record: where the next append goes
	lock io.Closer
}

// Open opens (creating) the outbox file at path, locks it, and cuts off a torn
// tail.
func Open[B comparable](path string, d *Driver[B]) (*Outbox[B], error) {
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
	fail := func(err error) (*Outbox[B], error) {
		f.Close()
		lock.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("outbox: open: %w", err))
	}
	_, good, torn, err := ScanRecords(f, st.Size())
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
	return &Outbox[B]{d: d, path: path, f: f, size: good, lock: lock}, nil
}

// Close closes the file and releases its lock.
func (o *Outbox[B]) Close() error {
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
func (o *Outbox[B]) Append(e *engine.OutcomeUnknownError[B]) error {
	if e == nil {
		return errors.New("outbox: nil record")
	}
	rec, err := o.d.EncodeRecord(e)
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
	buf := Frame(payload)
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
func (o *Outbox[B]) cutBack() {
	if o.f.Truncate(o.size) == nil {
		_ = o.f.Sync()
	}
}

// Snapshot returns the records in the file and the offset they end at.
func (o *Outbox[B]) Snapshot() ([]RawRecord, int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return nil, 0, errors.New("outbox: is closed")
	}
	recs, good, _, err := ScanRecords(io.NewSectionReader(o.f, 0, o.size), o.size)
	if err != nil {
		return nil, 0, fmt.Errorf("outbox: read: %w", err)
	}
	if good != o.size {
		return nil, 0, &CorruptError{Path: o.path, Offset: good}
	}
	return recs, good, nil
}

// Pending returns the recorded writes, oldest first.
func (o *Outbox[B]) Pending() ([]*engine.OutcomeUnknownError[B], error) {
	recs, _, err := o.Snapshot()
	if err != nil {
		return nil, err
	}
	out := make([]*engine.OutcomeUnknownError[B], 0, len(recs))
	for _, r := range recs {
		e, _, err := o.d.DecodeRecord(r.payload)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// rewrite replaces the file by keep (records of the snapshot that ends at end, not
// applied) followed by everything appended after end. It writes a new file and renames
// it over the old one, so a crash leaves either file whole: at worst applied records
// come back and are re-sent, which is harmless.
func (o *Outbox[B]) rewrite(keep []RawRecord, end int64) error {
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
		w.Write(Frame(r.payload))
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
