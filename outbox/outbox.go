package outbox

import (
	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/outbox"
)

// ErrValue is returned by Outbox.Append for a bound value it cannot store.
var ErrValue = core.ErrValue

// ErrLocked is returned by Open when another Outbox (in this or another
// process) has the file open.
var ErrLocked = core.ErrLocked

// ErrCorrupt is matched by *CorruptError.
var ErrCorrupt = core.ErrCorrupt

// CorruptError is returned by Open when the file holds a damaged record that
// is not a torn tail (intact data follows it). The file is left untouched: cutting it
// there would discard the records after the damage.
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
type Outbox struct {
	*core.Outbox[gocql.BatchType]
}

// Open opens (creating) the outbox file at path, locks it, and cuts off a torn
// tail.
func Open(path string) (*Outbox, error) {
	o, err := core.Open(path, gocqlDriver)
	if err != nil {
		return nil, err
	}
	return &Outbox{o}, nil
}
