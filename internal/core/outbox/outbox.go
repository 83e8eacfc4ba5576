package outbox

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// ErrValue is returned by Outbox.Append for a bound value it cannot store.
var ErrValue = errors.New("outbox: cannot store value")

// ErrLocked is returned by Open when another Outbox (in this or another
// process) has the file open.
var ErrLocked = errors.New("outbox: is open elsewhere")

// ErrCorrupt is matched by *CorruptError.
var ErrCorrupt = errors.New("outbox: file is corrupt")

// CorruptError is returned by Open when the file holds damage that is not a torn tail:
// a damaged record with intact data after it, a damaged last record (a torn append
// leaves a prefix of its frame, never a whole frame that fails its checksum), a damaged
// header. The file is left untouched: cutting it there would discard acknowledged
// records. Reason says what was found.
type CorruptError struct {
	Path   string
	Offset int64 // of the first damaged record (or of the header's damage)
	Reason string
}

func (e *CorruptError) Error() string {
	why := e.Reason
	if why == "" {
		why = "a damaged record, not a torn tail"
	}
	return fmt.Sprintf("outbox: %s is corrupt at offset %d (%s); it is left as it was", e.Path, e.Offset, why)
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
// The file starts with a header (FileHeader); each record is length-prefixed and
// CRC-32C checked, and Append fsyncs before it returns (the directory too, when the
// file is new). A crash in the middle of an append leaves a torn tail — a prefix of the
// last frame, or zeros — which Open cuts off and reports (Cut): every acknowledged
// record is intact. Any other damage — a flipped bit in a length, a checksum, a
// payload, the header; the last record included — is an *CorruptError, and the file is
// left as it was. A path that is not an outbox file is refused (ErrNotOutbox), never
// truncated.
//
// One Outbox at a time may have a file open: Open takes an exclusive lock (flock, on
// Unix) on the file itself, held until Close, so a second Open — in this process or
// another, through a symlink or a hard link — gets ErrLocked; it also holds the
// path+".lock" file earlier versions locked, so that one of those and this one never
// share a file. The path is resolved when Open runs (symlinks, the working directory):
// Replay and Drop rewrite the file it named then, by rename, leave a link as it is,
// and refuse to rename over a file the path has come to name since. A hard link names
// the outbox only until its first rewrite (the rename gives the outbox's path a new
// file, and the link keeps the old one). Where flock is unavailable the caller must ensure one
// Outbox per file. Within the process an Outbox is safe for concurrent use, and
// records appended while Replay runs are kept.
//
// An operator sees the records with List and removes one by its ID with Drop (or
// `cqlsafe outbox list|drop|replay FILE`): for a record Cassandra rejects on every
// replay (its table was dropped), which Replay keeps and reports but goes on past.
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

	replayMu sync.Mutex // one Replay or Drop at a time: each rewrites the file

	mu   sync.Mutex // guards f and size
	path string     // as given, for errors
	real string     // the file path resolves to: what a rewrite replaces
	f    *os.File   // also the lock (flock on the file itself)
	size int64      // end of the last intact record: where the next append goes
	cut  Cut
	// legacyLock is the flock on real+".lock", the lock of earlier versions.
	legacyLock io.Closer
}

// FileHeader opens every outbox file: a magic text and the format version (1).
const FileHeader = "CQLSAFE OUTBOX\x00\x01"

// ErrNotOutbox is returned by Open for a file that is not an outbox (no header, and not
// a file of an earlier version): it is left as it was.
var ErrNotOutbox = errors.New("outbox: not an outbox file")

// Cut is what Open removed from the end of the file: a torn tail, the part of an append
// that a crash interrupted — never acknowledged, since Append returns after fsync.
// Bytes 0: nothing was cut.
type Cut struct {
	Offset int64 // where the torn tail began
	Bytes  int64 // how many bytes were removed
}

// Cut says what Open cut off the end of the file (see Cut), for the caller to log.
func (o *Outbox[B]) Cut() Cut { return o.cut }

// Open opens the outbox file at path — creating it with its header, or the file a
// symlink at path points to —, locks it, and cuts off a torn tail (Cut says what). A
// file that is not an outbox (ErrNotOutbox), damage that is not a torn tail
// (*CorruptError) and a file another Outbox holds (ErrLocked) are errors, and the file
// is left as it was. A file written before outbox files had a header is read, and
// rewritten with one.
func Open[B comparable](path string, d *Driver[B]) (*Outbox[B], error) {
	real, err := resolve(path)
	if err != nil {
		return nil, err
	}
	f, err := openLocked(real)
	if err != nil {
		return nil, err
	}
	// The lock file of versions before the lock was on the outbox itself: held too, so
	// that such a process and this one never have the file open at once.
	legacyLock, err := lockPath(real + ".lock")
	if err != nil {
		f.Close()
		return nil, err
	}
	fail := func(err error) (*Outbox[B], error) {
		f.Close()
		legacyLock.Close()
		return nil, err
	}
	// A temporary file left by a rewrite that crashed before its rename: the outbox file
	// itself is still complete.
	removeTemp(real + rewriteSuffix)
	st, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("outbox: open: %w", err))
	}
	size := st.Size()
	head := make([]byte, min(size, int64(len(FileHeader))))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return fail(fmt.Errorf("outbox: read: %w", err))
	}
	o := &Outbox[B]{d: d, path: path, real: real, f: f, legacyLock: legacyLock}
	start := int64(len(FileHeader))
	legacy := false
	switch {
	case size == 0:
		// An empty file: nothing to lose (Open creates files with their header, so this
		// is one made by hand, or by a version before the header).
		if err := o.writeHeader(); err != nil {
			return fail(err)
		}
		return o, nil
	case string(head) == FileHeader:
	case len(head) == len(FileHeader) && string(head[:len(head)-1]) == FileHeader[:len(FileHeader)-1]:
		return fail(&CorruptError{Path: path, Offset: int64(len(FileHeader)) - 1,
			Reason: fmt.Sprintf("format %d: this version reads format %d (a file of a newer cqlsafe, or damage)", head[len(head)-1], FileHeader[len(FileHeader)-1])})
	default:
		legacy, err = legacyFile(f, size)
		if err != nil {
			return fail(fmt.Errorf("outbox: read: %w", err))
		}
		if !legacy {
			// A damaged header with records after it is damage, not another file.
			if size > start && intactFrom(f, start, size) {
				return fail(&CorruptError{Path: path, Offset: 0, Reason: "the header is damaged; intact records follow it"})
			}
			return fail(fmt.Errorf("%w: %s (%d bytes, no outbox header)", ErrNotOutbox, path, size))
		}
		start = 0
	}
	recs, good, torn, err := ScanRecords(f, start, size)
	if err != nil {
		return fail(fmt.Errorf("outbox: read: %w", err))
	}
	if good < size {
		if !torn {
			return fail(&CorruptError{Path: path, Offset: good, Reason: "a damaged record, not a torn tail"})
		}
		o.cut = Cut{Offset: good, Bytes: size - good}
	}
	o.size = good
	if legacy {
		// Rewritten with a header (and without the torn tail): the same records.
		if err := o.rewriteLocked(recs, good); err != nil {
			return fail(err)
		}
		return o, nil
	}
	if good < size {
		if err := f.Truncate(good); err != nil {
			return fail(fmt.Errorf("outbox: cut torn tail: %w", err))
		}
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("outbox: fsync: %w", err))
		}
	}
	return o, nil
}

// rewriteSuffix names the file a rewrite writes before renaming it over the outbox.
const rewriteSuffix = ".outbox-rewrite"

// removeTemp removes a rewrite's leftover at name — a regular file only.
func removeTemp(name string) {
	if fi, err := os.Lstat(name); err == nil && fi.Mode().IsRegular() {
		_ = os.Remove(name)
	}
}

// writeHeader starts an empty outbox file: the header, fsynced, and its directory
// fsynced, so that records acknowledged later cannot vanish with the file's directory
// entry on a power loss.
func (o *Outbox[B]) writeHeader() error {
	if _, err := o.f.WriteAt([]byte(FileHeader), 0); err != nil {
		return fmt.Errorf("outbox: create: %w", err)
	}
	if err := o.f.Sync(); err != nil {
		return fmt.Errorf("outbox: fsync: %w", err)
	}
	if err := syncDir(filepath.Dir(o.real)); err != nil {
		return fmt.Errorf("outbox: create: sync directory: %w", err)
	}
	o.size = int64(len(FileHeader))
	return nil
}

// resolve is the absolute path of the file path names, every symlink resolved — path
// itself, or the file a symlink at path points to, in the directory it is in now — so
// that a rewrite replaces that file, leaves the link, and does not follow a later
// chdir or a re-pointed directory link. A symlink to nothing is refused: what it should
// create is not clear.
func resolve(path string) (string, error) {
	if path == "" {
		return "", errors.New("outbox: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("outbox: open: %w", err)
	}
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
		if err != nil {
			return "", fmt.Errorf("outbox: open: %w", err)
		}
		return filepath.Join(dir, filepath.Base(abs)), nil
	case err != nil:
		return "", fmt.Errorf("outbox: open: %w", err)
	case fi.Mode()&fs.ModeSymlink == 0 && !fi.Mode().IsRegular():
		return "", fmt.Errorf("%w: %s is not a regular file", ErrNotOutbox, path)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("outbox: open: symlink %s: %w", path, err)
	}
	if fi, err := os.Stat(real); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file", ErrNotOutbox, real)
	}
	return real, nil
}

// create makes the outbox file at real, header and all, atomically: written under a
// name of its own, fsynced, then linked to real — which fails if real exists (another
// Open made it first: fine) — so no one ever sees a file with half a header.
func create(real string) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := real + ".outbox-new-" + hex.EncodeToString(rnd[:])
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: create: %w", err)
	}
	defer os.Remove(tmp)
	_, err = f.WriteString(FileHeader)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("outbox: create: %w", err)
	}
	if err := os.Link(tmp, real); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("outbox: create: %w", err)
	}
	if err := syncDir(filepath.Dir(real)); err != nil {
		return fmt.Errorf("outbox: create: sync directory: %w", err)
	}
	return nil
}

// openLocked opens (creating) the file at real and locks it. A rewrite elsewhere may
// rename a new file over it between the open and the lock; the lock then guards a file
// no one else will open, so it is taken again on the file the path names now.
func openLocked(real string) (*os.File, error) {
	for range 20 {
		if _, err := os.Lstat(real); errors.Is(err, fs.ErrNotExist) {
			if err := create(real); err != nil {
				return nil, err
			}
		}
		f, err := os.OpenFile(real, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since: create it again
		}
		if err != nil {
			return nil, fmt.Errorf("outbox: open: %w", err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, err
		}
		if namesFile(real, f) {
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("%w (%s: replaced while opening)", ErrLocked, real)
}

// namesFile reports whether path names the file f has open (same device and inode).
func namesFile(path string, f *os.File) bool {
	held, err1 := f.Stat()
	named, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(held, named)
}

// intactFrom reports whether an intact record starts at from.
func intactFrom(f *os.File, from, size int64) bool {
	var hdr [recordHeader]byte
	if size-from < recordHeader {
		return false
	}
	if _, err := f.ReadAt(hdr[:], from); err != nil {
		return false
	}
	n := int64(binary.BigEndian.Uint32(hdr[0:4]))
	if n == 0 || n > maxRecord || from+recordHeader+n > size {
		return false
	}
	payload := make([]byte, n)
	if _, err := f.ReadAt(payload, from+recordHeader); err != nil {
		return false
	}
	return payload[0] == '{' && crc32.Checksum(payload, castagnoli) == binary.BigEndian.Uint32(hdr[4:8])
}

// legacyFile reports whether f is an outbox written before files had a header: its
// first bytes are an intact record.
func legacyFile(f *os.File, size int64) (bool, error) { return intactFrom(f, 0, size), nil }

// Close closes the file and releases its lock.
func (o *Outbox[B]) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return nil
	}
	err := o.f.Close() // releases the lock
	o.f = nil
	if lerr := o.legacyLock.Close(); err == nil {
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
	recs, good, _, err := ScanRecords(o.f, int64(len(FileHeader)), o.size)
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
// applied) followed by everything appended after end. It writes a new file, locks it,
// and renames it over the old one (the file path resolves to), so a crash leaves either
// file whole: at worst applied records come back and are re-sent, which is harmless.
func (o *Outbox[B]) rewrite(keep []RawRecord, end int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil {
		return errors.New("outbox: is closed")
	}
	return o.rewriteLocked(keep, end)
}

func (o *Outbox[B]) rewriteLocked(keep []RawRecord, end int64) error {
	// The path must still name the file this Outbox holds: renaming over whatever it
	// names now (a directory link re-pointed, the file replaced by hand) would clobber
	// another file.
	if !namesFile(o.real, o.f) {
		return fmt.Errorf("outbox: rewrite: %s no longer names the file this Outbox holds: not rewritten", o.real)
	}
	held, err := o.f.Stat()
	if err != nil {
		return fmt.Errorf("outbox: rewrite: %w", err)
	}
	tail := make([]byte, o.size-end)
	if _, err := o.f.ReadAt(tail, end); err != nil && !(errors.Is(err, io.EOF) && len(tail) == 0) {
		return fmt.Errorf("outbox: read appended records: %w", err)
	}
	tmp := o.real + rewriteSuffix
	removeTemp(tmp)
	// O_EXCL: never through a symlink someone left at the temporary name.
	nf, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: rewrite: %w", err)
	}
	fail := func(err error) error {
		nf.Close()
		os.Remove(tmp)
		return fmt.Errorf("outbox: rewrite: %w", err)
	}
	// The new file keeps the old one's permissions and, where this process may set it,
	// its owner: a rewrite by an operator's tool must leave a file the service can open.
	if err := nf.Chmod(held.Mode().Perm()); err != nil {
		return fail(err)
	}
	sameOwner(nf, held)
	// Locked before it takes the outbox's name: another Open that finds it there finds
	// it held.
	if err := lockFile(nf); err != nil {
		return fail(err)
	}
	w := bufio.NewWriter(nf)
	w.WriteString(FileHeader)
	size := int64(len(FileHeader))
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
	if err := os.Rename(tmp, o.real); err != nil {
		return fail(err)
	}
	o.f.Close()
	o.f, o.size = nf, size
	// The rename must be durable before later appends to the new file are acknowledged,
	// or a crash could bring back the old file without them.
	if err := syncDir(filepath.Dir(o.real)); err != nil {
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

// Entry is one record as List shows it, for an operator deciding what to drop.
type Entry[B comparable] struct {
	// ID names the record while it is in the file: the first 16 hex digits of the
	// SHA-256 of its stored form (which holds the time it was recorded).
	ID       string
	Offset   int64     // of its frame in the file now
	Recorded time.Time // when Append stored it
	Write    *engine.OutcomeUnknownError[B]
	Err      error // the record cannot be decoded (Write is nil): Replay keeps it, Drop removes it
}

func recordID(payload []byte) string {
	sum := sha256.Sum256(payload)
	return hex.EncodeToString(sum[:8])
}

// List returns the records in the file, oldest first.
func (o *Outbox[B]) List() ([]Entry[B], error) {
	recs, _, err := o.Snapshot()
	if err != nil {
		return nil, err
	}
	out := make([]Entry[B], 0, len(recs))
	for _, r := range recs {
		en := Entry[B]{ID: recordID(r.payload), Offset: r.offset}
		var when struct {
			Recorded time.Time `json:"recorded"`
		}
		_ = json.Unmarshal(r.payload, &when)
		en.Recorded = when.Recorded
		en.Write, _, en.Err = o.d.DecodeRecord(r.payload)
		out = append(out, en)
	}
	return out, nil
}

// ErrNoRecord is returned by Drop for an ID that names no record in the file.
var ErrNoRecord = errors.New("outbox: no such record")

// Drop removes the records with these IDs (see List) and returns how many it removed.
// An ID that names no record is an error, and nothing is removed. The write a dropped
// record holds is then never replayed: for an operator who settled it another way, or
// whose statement can no longer run (its table was dropped).
func (o *Outbox[B]) Drop(ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	o.replayMu.Lock()
	defer o.replayMu.Unlock()
	recs, end, err := o.Snapshot()
	if err != nil {
		return 0, err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[strings.ToLower(strings.TrimSpace(id))] = false
	}
	var keep []RawRecord
	for _, r := range recs {
		id := recordID(r.payload)
		if _, ok := want[id]; ok {
			want[id] = true
			continue
		}
		keep = append(keep, r)
	}
	var missing []string
	for id, found := range want {
		if !found {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return 0, fmt.Errorf("%w: %s", ErrNoRecord, strings.Join(missing, ", "))
	}
	if err := o.rewrite(keep, end); err != nil {
		return 0, err
	}
	return len(recs) - len(keep), nil
}
