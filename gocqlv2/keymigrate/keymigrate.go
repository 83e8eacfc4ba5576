package keymigrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/table"
	core "github.com/cqlsafe/cqlsafe/internal/core/keymigrate"
)

// The copy, the leases, the verification and the rules are internal/core/keymigrate's,
// the same for both drivers (github.com/cqlsafe/cqlsafe/keymigrate has the same API
// with gocql v1.7's types, and shares the lease table's format: workers on either
// driver can share one backfill).

// Sentinels; nothing is written when one is returned for bad input.
var (
	ErrColumnMismatch     = core.ErrColumnMismatch
	ErrInvalidKey         = core.ErrInvalidKey
	ErrDuplicateKey       = core.ErrDuplicateKey
	ErrCheckpointMismatch = core.ErrCheckpointMismatch
)

// ErrNotStarted is returned by Status for a migration no worker has started.
var ErrNotStarted = core.ErrNotStarted

// Transform maps an old row (every column, by name) to the new table's key columns.
// It must be a pure function of the old row and must be injective.
type Transform = core.Transform

// Progress reports a backfill's advance.
type Progress = core.Progress

// Diff is one difference Verify found.
type Diff = core.Diff

// Report is what Verify found. It never changes either table.
type Report = core.Report

// Status is a backfill's progress as the lease table records it: what every worker,
// on any machine, has claimed and finished.
type Status = core.Status

// RangeStatus is one range's lease.
type RangeStatus = core.RangeStatus

// WorkerEvent is one step of a worker.
type WorkerEvent = core.WorkerEvent

// WorkerReport is what one RunWorker call did.
type WorkerReport = core.WorkerReport

// BackfillOption configures Backfill.
type BackfillOption = core.BackfillOption

// VerifyOption configures Verify. An invalid value is an error from Verify, before
// anything is read.
type VerifyOption = core.VerifyOption

// WorkerOption configures RunWorker and Status. An invalid value is an error from the
// call, before anything is sent.
type WorkerOption = core.WorkerOption

// WithRanges splits the token ring into n ranges (the unit of work and of checkpoints).
func WithRanges(n int) BackfillOption { return core.WithRanges(n) }

// WithConcurrency bounds how many ranges are copied at once.
func WithConcurrency(n int) BackfillOption { return core.WithConcurrency(n) }

// WithRowsInFlight bounds how many rows of one range are being written at once
// (default 16; 1 to 1024) while the scan reads on: a copy is bound by round trips, not
// by the scan. The load on the new table is up to WithConcurrency × n writes at once.
func WithRowsInFlight(n int) BackfillOption { return core.WithRowsInFlight(n) }

// WithPageSize sets rows per page of the scan.
func WithPageSize(n int) BackfillOption { return core.WithPageSize(n) }

// WithThrottle limits the copy to rowsPerSec rows per second overall.
func WithThrottle(rowsPerSec float64) BackfillOption { return core.WithThrottle(rowsPerSec) }

// WithCheckpoint records finished ranges in path (written atomically after each range)
// and, when path exists, resumes from it. A checkpoint of another migration is
// ErrCheckpointMismatch.
func WithCheckpoint(path string) BackfillOption { return core.WithCheckpoint(path) }

// WithoutDuplicateCheck turns off the in-memory check that no two old rows map to one
// new key. The check keeps 16 bytes per row copied (about 16 MB per million rows);
// without it memory stays flat, and Verify's row counts still reveal duplicates.
func WithoutDuplicateCheck() BackfillOption { return core.WithoutDuplicateCheck() }

// WithSample compares every n-th old row of each token range instead of all (counts
// stay complete); n ≥ 1 (1: every row, the default).
func WithSample(n int) VerifyOption { return core.WithSample(n) }

// WithVerifyConcurrency bounds how many token ranges Verify reads at once (default 8;
// 1 to 256). Each reads its old rows and the new row of each, one at a time.
func WithVerifyConcurrency(n int) VerifyOption { return core.WithVerifyConcurrency(n) }

// WorkerID names the worker in the lease table (default host-pid-random). Two workers
// must not share an id.
func WorkerID(id string) WorkerOption { return core.WorkerID(id) }

// WorkerLeaseTTL is how long a claim lives without renewal (default 60 s; whole seconds,
// 2 s to 24 h). The holder renews it every third of it; a worker that dies gives its
// range up to others this long after its last renewal.
func WorkerLeaseTTL(d time.Duration) WorkerOption { return core.WorkerLeaseTTL(d) }

// WorkerRanges splits the token ring into n ranges, the unit of claims (default 256).
// Every worker of a migration must use the same n: the first records it, and a worker
// started with another is refused (ErrCheckpointMismatch).
func WorkerRanges(n int) WorkerOption { return core.WorkerRanges(n) }

// WorkerRate throttles this worker to rowsPerSec rows per second (> 0; default none).
func WorkerRate(rowsPerSec float64) WorkerOption { return core.WorkerRate(rowsPerSec) }

// WorkerPageSize sets the rows per page of the range scan (default 1000).
func WorkerPageSize(n int) WorkerOption { return core.WorkerPageSize(n) }

// WorkerRowsInFlight bounds how many rows of the range this worker copies are being
// written at once (default 16; 1 to 1024), while the scan reads on.
func WorkerRowsInFlight(n int) WorkerOption { return core.WorkerRowsInFlight(n) }

// LeaseTable keeps the leases in keyspace.table (default: keymigrate_leases in the old
// table's keyspace). RunWorker creates it when it is missing; any number of migrations
// may share one.
func LeaseTable(keyspace, table string) WorkerOption { return core.LeaseTable(keyspace, table) }

// WithProgress receives progress after each range.
func WithProgress(f func(Progress)) BackfillOption { return core.WithProgress(f) }

// WithTestHookAfterRange calls f after each finished range with the number of ranges
// done: for tests that race writes against the backfill or stop it midway.
func WithTestHookAfterRange(f func(done int)) BackfillOption { return core.WithTestHookAfterRange(f) }

// WorkerProgress receives the worker's events as they happen, on the worker's
// goroutine (a function shared by several workers must be safe for concurrent use).
func WorkerProgress(f func(WorkerEvent)) WorkerOption { return core.WorkerProgress(f) }

// Migration moves a table to a new key format.
type Migration struct {
	ID     string
	policy *retry.Policy // its clock stamps dual writes and deletes
	m      *core.Migration[gocql.TypeInfo, gocql.UUID]
}

// Option configures a Migration.
type Option func(*Migration) error

// WithRetryPolicy retries writes through p and stamps them with timestamps from p's
// clock (default retry.NewPolicy()). p must be valid (retry.Policy.Err).
func WithRetryPolicy(p *retry.Policy) Option {
	return func(m *Migration) error {
		if p == nil {
			return errors.New("keymigrate: nil retry policy")
		}
		if err := p.Err(); err != nil {
			return fmt.Errorf("keymigrate: %w", err)
		}
		m.policy = p
		return nil
	}
}

// New checks that old and new (described with table.Describe) have the same
// non-key columns with the same types, and returns the migration. id names it in
// checkpoints.
func New(s *gocql.Session, id string, old, new *table.Table, transform Transform, opts ...Option) (*Migration, error) {
	m := &Migration{ID: id, policy: retry.NewPolicy()}
	var sess core.Session
	if s != nil {
		sess = &session{s: s, m: m}
	}
	cm, err := core.New[gocql.TypeInfo, gocql.UUID](cqlvalue.Driver{}, sess, id, old, new, transform)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(m); err != nil {
			return nil, err
		}
	}
	m.m = cm
	return m, nil
}

// DualWrite writes row (column → value; absent or nil columns, typed nil pointers
// included, are left untouched, never written as NULL) to the old table and, under its
// transformed key, to the new table, in one logged batch with the same pinned
// timestamp, which it returns. Retries re-send the same timestamp.
//
// A row that writes elements into a non-frozen list column is sent once and never
// retried (a repeat would duplicate the list): when its outcome is unknown the error is
// an *retry.OutcomeUnknownError that matches retry.ErrNotIdempotent. Read the row
// before writing it again.
func (m *Migration) DualWrite(ctx context.Context, row map[string]any) (int64, error) {
	return m.m.DualWrite(ctx, row)
}

// DualDelete deletes a row from the old table and, under its transformed key, from the
// new one, in one logged batch with one pinned timestamp, which it returns. Use it
// instead of deleting from the old table alone while dual writes are on: a row deleted
// only there lives on in the new table and comes back at cut-over.
//
// row holds the old table's primary key and every other column the Transform reads. A
// row with clustering columns is deleted as a row (static columns stay); without, the
// partition is deleted. The delete is idempotent and retried. A backfill copy of the
// row carries the source's older WRITETIME, so it never resurrects a deleted row.
func (m *Migration) DualDelete(ctx context.Context, row map[string]any) (int64, error) {
	return m.m.DualDelete(ctx, row)
}

// Backfill copies every row of the old table into the new one under its transformed
// key, each cell USING TIMESTAMP its original WRITETIME and with its remaining TTL (none:
// UNSET, so the new table's default applies), so newer dual-written values always win.
// It scans by token range, paged (memory does not grow with the table, apart from the
// duplicate check), copying WithConcurrency ranges at a time, and returns the progress
// of this run. Non-frozen collections are copied whole at their MAXWRITETIME, with the
// longest of their elements' TTLs (none when any element has none); a non-frozen list
// only when the new table does not hold it at that time or later (see
// the package doc). Before Cassandra 5.0, which cannot read a non-frozen collection's or
// UDT's write times or TTLs, a table with one is a *table.UnsupportedError
// (table.ErrUnsupported) naming the column, returned before anything is read or
// written; other column types copy as on 5.0.
func (m *Migration) Backfill(ctx context.Context, opts ...BackfillOption) (Progress, error) {
	return m.m.Backfill(ctx, opts...)
}

// Verify counts the rows of both tables and compares old rows' values with the new rows
// under their transformed keys (all of them, or a sample). NULL and a zero value (0,
// "", false, an empty frozen collection) are different values. It reports; it never
// fixes. Run it after the backfill with dual writes on: a row updated between the two
// reads can show as different and should be re-checked. Token ranges are read
// WithVerifyConcurrency at a time; Diffs are in token order whatever finished first.
func (m *Migration) Verify(ctx context.Context, opts ...VerifyOption) (Report, error) {
	return m.m.Verify(ctx, opts...)
}

// RunWorker joins the migration's backfill as one worker and returns when every range
// is done. Any number of workers, in any processes on any machines, may run at once:
// they share the work through a lease table in Cassandra (LeaseTable), one claim per
// token range:
//
//   - A worker claims a free range with a lightweight transaction (INSERT … IF NOT
//     EXISTS USING TTL), renews the lease every third of its TTL (UPDATE … IF lease =
//     the id it holds) while it copies the range as Backfill does — each cell USING
//     TIMESTAMP its WRITETIME, with its TTL, non-frozen lists only where the new table
//     does not hold them yet — and marks it done (an LWT by the holder; done has no TTL).
//   - A worker that dies stops renewing; its lease expires and another worker copies the
//     range again. A worker whose renewal fails stops copying that range. Copying a range
//     twice leaves the same rows, cells, write times and TTLs as copying it once.
//   - An LWT whose outcome is unknown (a timeout) is not re-sent but settled by a SERIAL
//     read (settle.LWT); one that cannot be settled counts as not applied: the lease
//     then expires by itself.
//   - A worker with nothing left to claim (every range done or held) reads the lease
//     table every second (an eighth of the lease TTL when shorter; with more than 1024
//     ranges, a second per 1024, up to a quarter of the TTL) until the migration is
//     complete or a lease it can take over expires. Reads that fail for a passing
//     reason are tried again for up to a lease TTL.
//   - When ctx is cancelled the worker stops, gives its lease back (so others need not
//     wait for the TTL) and returns ctx's error with its report.
//
// The first worker records the number of ranges and the two tables; a worker with
// other settings under the same migration ID is refused (ErrCheckpointMismatch).
// Progress lives in the lease table: Status reads it, and a worker started later
// resumes where the others are. Two old rows mapping to one new key within a range
// are ErrDuplicateKey; across ranges only Verify's row counts reveal them.
//
// The lease table is created when it is missing (CREATE TABLE IF NOT EXISTS). On a
// multi-node cluster, start one worker first, so that several clients do not create
// it at once.
func (m *Migration) RunWorker(ctx context.Context, opts ...WorkerOption) (WorkerReport, error) {
	return m.m.RunWorker(ctx, opts...)
}

// Status reads the progress of the migration's multi-worker backfill (RunWorker) from
// its lease table (LeaseTable; the other options are checked and ignored). A migration
// no worker has started is ErrNotStarted.
func (m *Migration) Status(ctx context.Context, opts ...WorkerOption) (Status, error) {
	return m.m.Status(ctx, opts...)
}
