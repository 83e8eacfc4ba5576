package outbox

import (
	gocql "github.com/apache/cassandra-gocql-driver/v2"

	core "github.com/cqlsafe/cqlsafe/internal/core/outbox"
)

// ErrValue is returned by Outbox.Append for a bound value it cannot store.
var ErrValue = core.ErrValue

// ErrLocked is returned by Open when another Outbox (in this or another
// process) has the file open.
var ErrLocked = core.ErrLocked

// ErrNotOutbox is returned by Open for a file that is not an outbox: it is left as it
// was.
var ErrNotOutbox = core.ErrNotOutbox

// ErrNoRecord is returned by Drop for an ID that names no record: nothing is dropped.
var ErrNoRecord = core.ErrNoRecord

// Cut is what Open removed from the end of the file: a torn tail, the part of an append
// a crash interrupted (never acknowledged: Append returns after fsync). Offset is where
// it began, Bytes its length; Bytes 0: nothing was cut.
type Cut = core.Cut

// Entry is one record as List shows it: its ID (for Drop), offset, the time it was
// recorded, and the write (nil, with Err, when it cannot be decoded).
type Entry = core.Entry[gocql.BatchType]

// ErrCorrupt is matched by *CorruptError.
var ErrCorrupt = core.ErrCorrupt

// CorruptError is returned by Open when the file holds damage that is not a torn
// tail — a damaged record with or without intact data after it, a damaged header. The
// file is left untouched: cutting it there would discard acknowledged records.
type CorruptError = core.CorruptError

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
type Outbox struct {
	*core.Outbox[gocql.BatchType]
}

// Open opens the outbox file at path — creating it with its header, or the file a
// symlink at path points to —, locks it, and cuts off a torn tail (Cut says what, for
// the caller to log). A file that is not an outbox (ErrNotOutbox), damage that is not a
// torn tail (*CorruptError) and a file another Outbox holds (ErrLocked) are errors, and
// the file is left as it was. A file written by a version before outbox files had a
// header is read and rewritten with one.
func Open(path string) (*Outbox, error) {
	o, err := core.Open(path, gocqlDriver)
	if err != nil {
		return nil, err
	}
	return &Outbox{o}, nil
}

// Cut says what Open cut off the end of the file: a torn tail (see Cut), for the caller
// to log. The zero Cut: nothing was cut.
func (o *Outbox) Cut() Cut { return o.Outbox.Cut() }

// List returns the records in the file, oldest first, each with the ID Drop takes.
func (o *Outbox) List() ([]Entry, error) { return o.Outbox.List() }

// Drop removes the records with these IDs (from List) and returns how many it removed;
// an ID that names no record is an error (ErrNoRecord) and nothing is removed. A
// dropped write is never replayed: for a record an operator settled another way, or
// that Cassandra rejects on every replay (its table was dropped — Replay keeps it and
// goes on past it).
func (o *Outbox) Drop(ids ...string) (int, error) { return o.Outbox.Drop(ids...) }
