package keymigrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/settle"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// This file holds the lease table through which workers share a backfill: one Cassandra
// partition per (migration, range), so the lightweight transactions of different ranges
// never contend in one Paxos round.
//
//	attempt = ''       the lease: owner, lease id, state claimed|done, rows, updated_at.
//	                   While claimed every cell carries the lease TTL, so a dead worker's
//	                   lease vanishes and INSERT … IF NOT EXISTS succeeds for another;
//	                   done is written without a TTL and stays.
//	attempt = <claim>  the log of one claim (plain writes): rows copied so far, counted
//	                   every logEvery rows, and how it ended. Status sums them to tell how
//	                   many rows were copied more than once.
//	range = -1         the migration's description (ranges, source, target), so workers
//	                   started with other settings refuse to join.

// logEvery is how often (rows) a claim's progress is logged: the count a dead worker
// leaves behind is short of what it copied by less than this.
const logEvery = 100

// settleWait is how long an LWT of unknown outcome is left before its row is read at
// SERIAL: past cas_contention_timeout (1 s by default), so the coordinator has stopped
// re-proposing it (see settle.LWT).
const settleWait = 2 * time.Second

// Lease states.
const (
	stateClaimed = "claimed"
	stateDone    = "done"
)

// ErrNotStarted is returned by Status for a migration no worker has started.
var ErrNotStarted = errors.New("keymigrate: no worker has started this migration")

// leases runs the statements of one migration's lease table.
type leases struct {
	s         Session
	keyspace  string
	table     string
	migration string

	create, meta, readMeta                       string
	claim, renew, done, release, logAttempt, all string
}

func newLeases(s Session, migration, keyspace, table string) (*leases, error) {
	if err := cqltext.ValidName(keyspace); err != nil {
		return nil, fmt.Errorf("keymigrate: lease keyspace: %w", err)
	}
	if err := cqltext.ValidName(table); err != nil {
		return nil, fmt.Errorf("keymigrate: lease table: %w", err)
	}
	t := cqltext.QuoteQualified(keyspace, table)
	return &leases{
		s: s, keyspace: keyspace, table: table, migration: migration,
		create: `CREATE TABLE IF NOT EXISTS ` + t + ` (migration text, range int, attempt text, owner text, lease uuid, ` +
			`state text, rows bigint, updated_at timestamp, ranges int, source text, target text, ` +
			`PRIMARY KEY ((migration, range), attempt))`,
		meta:     `INSERT INTO ` + t + ` (migration, range, attempt, ranges, source, target) VALUES (?, -1, '', ?, ?, ?) IF NOT EXISTS`,
		readMeta: `SELECT ranges, source, target FROM ` + t + ` WHERE migration = ? AND range = -1 AND attempt = ''`,
		// IF NOT EXISTS before USING: Cassandra's grammar.
		claim: `INSERT INTO ` + t + ` (migration, range, attempt, owner, lease, state, rows, updated_at) ` +
			`VALUES (?, ?, '', ?, ?, 'claimed', 0, ?) IF NOT EXISTS USING TTL ?`,
		// Every cell of the lease row is rewritten: the row marker of the claim expires
		// with its first TTL, the row lives on through these cells.
		renew: `UPDATE ` + t + ` USING TTL ? SET owner = ?, lease = ?, state = 'claimed', rows = ?, updated_at = ? ` +
			`WHERE migration = ? AND range = ? AND attempt = '' IF lease = ?`,
		// No TTL: a done range stays done. "state = 'claimed'" lets a SERIAL read tell
		// this write's effect from what was there before (settle.LWT).
		done: `UPDATE ` + t + ` SET owner = ?, lease = ?, state = 'done', rows = ?, updated_at = ? ` +
			`WHERE migration = ? AND range = ? AND attempt = '' IF lease = ? AND state = 'claimed'`,
		release: `DELETE FROM ` + t + ` WHERE migration = ? AND range = ? AND attempt = '' IF lease = ?`,
		logAttempt: `UPDATE ` + t + ` SET owner = ?, state = ?, rows = ?, updated_at = ? ` +
			`WHERE migration = ? AND range = ? AND attempt = ?`,
		all: `SELECT range, attempt, owner, state, rows, updated_at, TTL(owner) FROM ` + t +
			` WHERE migration = ? AND range IN ?`,
	}, nil
}

// ensure creates the lease table when it is missing. Concurrent CREATE TABLE IF NOT
// EXISTS from several clients can race on a multi-node cluster (each coordinator may
// mint its own table id), so it is skipped when the schema already has the table.
func (l *leases) ensure(ctx context.Context) error {
	if !l.s.HasTable(l.keyspace, l.table) {
		if err := l.s.Exec(ctx, l.create, nil); err != nil {
			return fmt.Errorf("keymigrate: create lease table %s.%s: %w", l.keyspace, l.table, err)
		}
		if err := l.s.AwaitSchemaAgreement(ctx); err != nil {
			return fmt.Errorf("keymigrate: create lease table %s.%s: %w", l.keyspace, l.table, err)
		}
	}
	// A CREATE … IF NOT EXISTS racing another client's can return before the table is
	// usable ("table … does not exist"): wait until a read of it works.
	var err error
	for range 40 {
		if _, _, err = l.s.Row(ctx, l.readMeta, []any{l.migration}, 3, false); err == nil {
			return nil
		}
		if !l.schemaSettling(err) {
			break
		}
		if werr := wait.Sleep(ctx, 250*time.Millisecond); werr != nil {
			return werr
		}
	}
	return fmt.Errorf("keymigrate: lease table %s.%s: %w", l.keyspace, l.table, err)
}

// schemaSettling reports whether err is what a table just created by racing clients
// answers until the schema settles: "does not exist" (Invalid), or a server error
// naming a table id that lost the race ("Unknown CF …", seen on a single node with three
// workers started at once).
func (l *leases) schemaSettling(err error) bool { return schemaSettling(l.s, err) }

func schemaSettling(s Session, err error) bool {
	code, msg, ok := s.RequestError(err)
	if !ok {
		return false
	}
	return code == codeInvalid ||
		code == codeServer && (strings.Contains(msg, "Unknown CF") || strings.Contains(msg, "unconfigured table"))
}

// describe records the migration's ranges and tables, or checks them against the record:
// workers that split the ring differently would copy overlapping ranges under one name.
// While the lease table's schema settles (schemaSettling) it tries again, for up to 10 s.
func (l *leases) describe(ctx context.Context, ranges int, source, target string) error {
	var err error
	for range 40 {
		if err = l.describeOnce(ctx, ranges, source, target); err == nil || !l.schemaSettling(err) {
			return err
		}
		if werr := wait.Sleep(ctx, 250*time.Millisecond); werr != nil {
			return werr
		}
	}
	return err
}

// describeOnce is one try of describe. Trying again is safe: the record is an INSERT IF
// NOT EXISTS, and a try that finds it recorded compares it.
func (l *leases) describeOnce(ctx context.Context, ranges int, source, target string) error {
	applied, err := l.s.CAS(ctx, l.meta, []any{l.migration, ranges, source, target})
	switch {
	case err == nil && applied:
		return nil
	case err != nil && !decision.ConditionalMayHaveApplied(decision.Facts{Class: l.s.Class(err)}):
		return fmt.Errorf("keymigrate: record migration %q: %w", l.migration, err)
	}
	// Not applied, or unknown: what is recorded now (a SERIAL read settles any round in
	// flight) must be this migration's description, whoever wrote it.
	r, src, dst, found, err := l.meta3(ctx, true)
	if err == nil && !found {
		err = errors.New("not found")
	}
	if err != nil {
		return fmt.Errorf("keymigrate: read migration %q: %w", l.migration, err)
	}
	if r != ranges || src != source || dst != target {
		return fmt.Errorf("%w: migration %q is recorded as %s → %s in %d ranges, not %s → %s in %d", ErrCheckpointMismatch,
			l.migration, src, dst, r, source, target, ranges)
	}
	return nil
}

// readDescription returns the recorded ranges, source and target; ErrNotStarted when
// none is recorded.
func (l *leases) readDescription(ctx context.Context) (int, string, string, error) {
	r, src, dst, found, err := l.meta3(ctx, false)
	switch {
	case err == nil && !found:
		return 0, "", "", fmt.Errorf("%w: %q", ErrNotStarted, l.migration)
	case err != nil:
		if code, _, ok := l.s.RequestError(err); ok && code == codeInvalid {
			// The lease table does not exist yet.
			return 0, "", "", fmt.Errorf("%w: %q (%v)", ErrNotStarted, l.migration, err)
		}
		return 0, "", "", fmt.Errorf("keymigrate: read migration %q: %w", l.migration, err)
	}
	return r, src, dst, nil
}

// meta3 reads the migration's description: ranges, source, target.
func (l *leases) meta3(ctx context.Context, serial bool) (r int, src, dst string, found bool, err error) {
	cells, found, err := l.s.Row(ctx, l.readMeta, []any{l.migration}, 3, serial)
	if err != nil || !found {
		return 0, "", "", found, err
	}
	if cells[0] != nil {
		if r, err = decodeInt(cells[0]); err != nil {
			return 0, "", "", true, err
		}
	}
	return r, string(cells[1]), string(cells[2]), true, nil
}

// lwtResult is what one lease transaction did.
type lwtResult int

const (
	lwtApplied lwtResult = iota
	lwtNotApplied
	lwtUnknown // the outcome could not be settled: act as if it did not apply, and let the TTL clean up
)

// cas runs a lease LWT. When its outcome is unknown (a timeout, a lost connection) it
// is not re-sent — a re-sent LWT that had applied finds its own write and says "not
// applied" — but settled by a SERIAL read of its row.
func (l *leases) cas(ctx context.Context, cql string, values ...any) (lwtResult, error) {
	applied, err := l.s.CAS(ctx, cql, values)
	switch {
	case err == nil && applied:
		return lwtApplied, nil
	case err == nil:
		return lwtNotApplied, nil
	case ctx.Err() != nil:
		return lwtUnknown, ctx.Err()
	case !decision.ConditionalMayHaveApplied(decision.Facts{Class: l.s.Class(err)}):
		// Unavailable and Overloaded too may come after the proposal was accepted (a
		// class without its consistency is judged as one at the commit's).
		return lwtNotApplied, fmt.Errorf("keymigrate: lease: %w", err)
	}
	outcome, serr := l.s.SettleLWT(ctx, cql, values, settleWait)
	switch {
	case serr != nil:
		return lwtUnknown, nil
	case outcome == settle.LWTApplied:
		return lwtApplied, nil
	case outcome == settle.LWTNotApplied:
		return lwtNotApplied, nil
	}
	return lwtUnknown, nil
}

// claimRange tries to take range r for owner under a fresh lease id.
func (l *leases) claimRange(ctx context.Context, r int, owner string, lease [16]byte, ttl int) (lwtResult, error) {
	return l.cas(ctx, l.claim, l.migration, r, owner, lease, time.Now().UTC(), ttl)
}

// renewRange extends the lease held under id old, moving it to id next; rows is the
// progress recorded with it.
func (l *leases) renewRange(ctx context.Context, r int, owner string, old, next [16]byte, rows int64, ttl int) (lwtResult, error) {
	return l.cas(ctx, l.renew, ttl, owner, next, rows, time.Now().UTC(), l.migration, r, old)
}

// finishRange marks range r done, if the lease id still holds it.
func (l *leases) finishRange(ctx context.Context, r int, owner string, lease, next [16]byte, rows int64) (lwtResult, error) {
	return l.cas(ctx, l.done, owner, next, rows, time.Now().UTC(), l.migration, r, lease)
}

// releaseRange gives up the lease at once, so another worker need not wait for its TTL.
func (l *leases) releaseRange(ctx context.Context, r int, lease [16]byte) (lwtResult, error) {
	return l.cas(ctx, l.release, l.migration, r, lease)
}

// logClaim records a claim's progress: a plain, idempotent write (pinned timestamp,
// fixed values), each newer than the last from this process's clock.
func (l *leases) logClaim(ctx context.Context, r int, claim [16]byte, owner, state string, rows int64) error {
	if err := l.s.Write(ctx, l.logAttempt, []any{owner, state, rows, time.Now().UTC(), l.migration, r, uuidString(claim)}, 0, ""); err != nil {
		return fmt.Errorf("keymigrate: log claim of range %d: %w", r, err)
	}
	return nil
}

// leaseRow is one row of the lease table.
type leaseRow struct {
	rng       int
	attempt   string
	owner     string
	state     string
	rows      int64
	updatedAt time.Time
	ttl       int // seconds left of a claimed lease
}

// read returns the rows of ranges 0..n-1, partition by partition in groups.
func (l *leases) read(ctx context.Context, n int) ([]leaseRow, error) {
	const group = 64 // partitions per IN query: the coordinator reads them in parallel
	var out []leaseRow
	for lo := 0; lo < n; lo += group {
		ids := make([]int, 0, group)
		for r := lo; r < min(lo+group, n); r++ {
			ids = append(ids, r)
		}
		var derr error
		err := l.s.Iter(ctx, l.all, []any{l.migration, ids}, 1000, 7, func(c [][]byte) bool {
			var r leaseRow
			r.rng, derr = decodeInt(c[0])
			r.attempt, r.owner, r.state = string(c[1]), string(c[2]), string(c[3])
			if derr == nil && c[4] != nil {
				r.rows, derr = decodeBigint(c[4])
			}
			if derr == nil && c[5] != nil {
				r.updatedAt, derr = decodeTimestamp(c[5])
			}
			if derr == nil && c[6] != nil {
				r.ttl, derr = decodeInt(c[6])
			}
			out = append(out, r)
			return derr == nil
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return nil, fmt.Errorf("keymigrate: read leases of %q: %w", l.migration, err)
		}
	}
	return out, nil
}

// uuidString formats a UUID as gocql's UUID.String does.
func uuidString(u [16]byte) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 36)
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&0xf])
	}
	return string(b)
}
