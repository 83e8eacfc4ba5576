package tombstone

import (
	"context"
	"errors"
	"fmt"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/table"
	core "github.com/cqlsafe/cqlsafe/internal/core/tombstone"
)

// The records, the plan and the rules are internal/core/tombstone's, the same for both
// drivers (github.com/cqlsafe/cqlsafe/tombstone has the same API with gocql v1.7's
// types).

// Sentinels. Bad input returns one before anything is written.
var (
	ErrEmptyCommand     = core.ErrEmptyCommand
	ErrNoRow            = core.ErrNoRow
	ErrNoTombstone      = core.ErrNoTombstone
	ErrNotLastDelete    = core.ErrNotLastDelete
	ErrRowExists        = core.ErrRowExists
	ErrNoTombstoneTable = core.ErrNoTombstoneTable
	ErrInvalidName      = core.ErrInvalidName
	// ErrRestoreShadowed: the restore applied, but the row is not visible — a delete
	// stamped at or after the restore's timestamp shadows it (see Undelete).
	ErrRestoreShadowed = core.ErrRestoreShadowed
	// ErrNotRestored: a restore whose reply was lost turned out not to have applied.
	ErrNotRestored = core.ErrNotRestored
	// ErrRestoreUnknown: whether the restore applied could not be settled.
	ErrRestoreUnknown = core.ErrRestoreUnknown
)

// RestoreError is the typed error of an Undelete whose restore was sent: Err is
// ErrRestoreShadowed, ErrNotRestored, ErrRestoreUnknown or ErrRowExists (errors.Is
// matches it), Cause what was observed (a driver error, or nil).
type RestoreError = core.RestoreError

// Record actions.
const (
	ActionDelete   = core.ActionDelete
	ActionUndelete = core.ActionUndelete
)

// Record is one entry of a row's history in the tombstone table: the Table
// (keyspace.table) of the deleted row, the record's ID, the CommandID that wrote it, its
// Action (ActionDelete or ActionUndelete) and time (At); the Timestamp the delete used
// (µs: the newest cell it read); the row's non-null Values as they were, decoded; the
// WriteTimes of each column read (MAXWRITETIME for a non-frozen collection); and Expires,
// when each recorded cell that had a TTL would have expired (to the second; a
// non-frozen collection's elements share the latest expiry of any of them, or none if
// one of them had no TTL).
type Record = core.Record[gocql.UUID]

// Plan is what an Undelete would do, decided without writing anything: Allowed when
// Undelete would restore the row now, else the Reason (ErrNoTombstone,
// ErrNotLastDelete, ErrRowExists); the most recent record (Tombstone); the values it
// would Restore (the recorded ones that would not have expired by now) with the TTL
// each would get (RestoreTTL: what it had left; absent: none, even on a table with a
// default TTL); and the row's values now (Current, nil when the row does not exist).
type Plan = core.Plan[gocql.UUID]

// Untidy is a state Reconcile found: the row (Table, RowKey and its decoded Key), the
// Kind ("recreated": the row is live although its last record is a delete) and the Last
// record.
type Untidy = core.Untidy[gocql.UUID]

// Report is what Reconcile found and did: the tombstone rows Scanned, the distinct
// deleted Rows of the table, the Untidy ones, and how many were Cleaned (fix only).
type Report = core.Report[gocql.UUID]

// Option configures a Store.
type Option = core.Option[*retry.Policy]

// WithSettleDelay sets how long after sending a restore whose reply was lost Undelete
// waits before the SERIAL read that settles it (at least 0). A Paxos coordinator keeps
// retrying a contended round for the cluster's cas_contention_timeout (1 s by default)
// from when it received the request; a round begun before the settling read is fenced
// by it, one begun after could still apply. So: that timeout plus the network delay.
func WithSettleDelay(d time.Duration) Option { return core.WithSettleDelay[*retry.Policy](d) }

// WithTTL sets how long tombstones are kept (at least 1 s).
func WithTTL(d time.Duration) Option { return core.WithTTL[*retry.Policy](d) }

// WithRetryPolicy retries the delete batch through p, and takes timestamps from p's
// clock. p must be valid (retry.Policy.Err).
func WithRetryPolicy(p *retry.Policy) Option {
	var err error
	switch {
	case p == nil:
		err = errors.New("tombstone: nil retry policy")
	case p.Err() != nil:
		err = fmt.Errorf("tombstone: %w", p.Err())
	}
	return core.WithRetryPolicy(p, err)
}

// WithHookAfterRead calls f between Delete's read and its write: for tests that need a
// racing write at exactly that point.
func WithHookAfterRead(f func()) Option { return core.WithHookAfterRead[*retry.Policy](f) }

// Store records and undoes deletes of rows, using a tombstone table.
type Store struct {
	st *core.Store[gocql.TypeInfo, gocql.UUID, *retry.Policy]
}

// New returns a Store using the tombstone table keyspace.table (from the schema
// "tombstones" template). It checks the table exists (ErrNoTombstoneTable).
func New(ctx context.Context, s *gocql.Session, keyspace, name string, opts ...Option) (*Store, error) {
	cfg, err := core.Apply(keyspace, name, core.Defaults(retry.NewPolicy()), opts)
	if err != nil {
		return nil, err
	}
	var sess core.Session[gocql.UUID]
	if s != nil {
		sess = session{s, cfg.Policy}
	}
	st, err := core.New(ctx, cqlvalue.Driver{}, sess, keyspace, name, cfg)
	if err != nil {
		return nil, err
	}
	return &Store{st}, nil
}

// Delete deletes the row with primary key key (a map or struct with the key columns)
// from t, recording a tombstone stamped with commandID. It returns the record. A row
// that does not exist is ErrNoRow and records nothing.
//
// The row is deleted at T, the newest WRITETIME read (Record.Timestamp): a write that
// lands between the read and the delete survives iff its timestamp is above T. See the
// package doc for why not per column. Before Cassandra 5.0 a table with a non-frozen
// collection or UDT is a *table.UnsupportedError (table.ErrUnsupported), returned
// before anything is read or written.
func (st *Store) Delete(ctx context.Context, t *table.Table, key any, commandID string) (Record, error) {
	return st.st.Delete(ctx, t, key, commandID)
}

// List returns the row's tombstone records (deletes and undeletes), newest first.
func (st *Store) List(ctx context.Context, t *table.Table, key any) ([]Record, error) {
	return st.st.List(ctx, t, key)
}

// Plan shows what Undelete(ctx, t, key, commandID) would do — the values it would
// restore and the row as it is now — so a person can decide before anything is applied.
// Before Cassandra 5.0 a table with a non-frozen collection or UDT is
// table.ErrUnsupported, as for Delete (and so for Undelete and Reconcile).
func (st *Store) Plan(ctx context.Context, t *table.Table, key any, commandID string) (Plan, error) {
	return st.st.Plan(ctx, t, key, commandID)
}

// Undelete restores the row deleted by commandID, if and only if the row's most recent
// delete came from commandID and the row does not exist now. Otherwise the error says
// why: ErrNoTombstone (nothing to undo, already undone, or every cell would have
// expired), ErrNotLastDelete, ErrRowExists. It returns the record of the undelete.
//
// The restore is one INSERT … IF NOT EXISTS (with an UPDATE per further TTL, in one
// conditional batch), so a row recreated meanwhile is never clobbered. Each cell gets
// the TTL it had left (Plan.RestoreTTL); the row marker gets the longest. The LWT is
// sent once, whatever the session's retry policy. Its outcome is checked with a SERIAL
// read of the row before the undelete is recorded:
//
//   - applied, and the restored cells visible: success.
//   - applied, but the row (or a restored cell) not visible: a delete stamped at or
//     after the LWT's Paxos ballot (a future-dated delete — the delete of a row whose
//     newest cell was future-dated is one — or a delete that raced in) shadows it:
//     *RestoreError matching ErrRestoreShadowed. An LWT cannot carry USING TIMESTAMP;
//     overwrite.Row with a timestamp above the delete's can restore it by hand.
//   - outcome unknown (timeout, lost connection, CAS write unknown, Unavailable, a
//     context done after sending): after the settle delay
//     (WithSettleDelay) a SERIAL read, which completes or fences the Paxos round,
//     settles it: restored (success, as above), ErrNotRestored (row absent: call
//     Undelete again), ErrRowExists (the row exists with other values: recreated, or
//     restored and changed since), or ErrRestoreUnknown (the read failed too).
//
// Nothing is recorded unless the restore is known to be visible.
func (st *Store) Undelete(ctx context.Context, t *table.Table, key any, commandID string) (Record, error) {
	return st.st.Undelete(ctx, t, key, commandID)
}

// Reconcile scans the tombstone table for t's rows and reports untidy states left by
// races: rows that are live again although their last record is a delete (recreated
// after the delete; their tombstone can no longer be undone and only confuses). With fix
// it removes exactly the records it read for those rows, each at its own write
// timestamp: a record written meanwhile (a Delete that raced the clean-up, whatever its
// clock) is left alone. It reads the whole tombstone table (paged): run it from an
// operator tool, not a request path.
func (st *Store) Reconcile(ctx context.Context, t *table.Table, fix bool) (Report, error) {
	return st.st.Reconcile(ctx, t, fix)
}
