package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/keymigrate"
)

// What Cassandra holds after a backfill with rows in flight (WithRowsInFlight) is
// cancelled or fails in the middle of a range, and after copying a static list.

// cancelAtRow returns a Transform that, at its at-th call, waits for the writes in
// flight to end and then cancels the run's context: the cancellation lands while the
// scan is between rows and no write is in flight (a slow Transform, a GC pause, a scan
// faster than its writes at that moment).
func cancelAtRow(at int64, cancel context.CancelFunc) keymigrate.Transform {
	var calls atomic.Int64
	return func(row map[string]any) (map[string]any, error) {
		if calls.Add(1) == at {
			time.Sleep(500 * time.Millisecond) // the rows before it are written by now
			cancel()
		}
		return toSortable(row)
	}
}

// TestKeymigrateCancelledRangeNotCheckpointed: a Backfill cancelled in the middle
// of its only range must not record that range as done in its checkpoint; resumed
// from the checkpoint, the new table must hold every row.
func TestKeymigrateCancelledRangeNotCheckpointed(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	const n = 300
	fillPosts(t, s, n)
	oldT, newT := describe(t, s, ks, "comments_v1"), describe(t, s, ks, "comments_v2")
	plain := newMigration(t, s, ks, toSortable)
	dir := t.TempDir()
	for attempt := 1; attempt <= 16; attempt++ {
		harness.Exec(t, s, `TRUNCATE comments_v2`)
		cp := filepath.Join(dir, fmt.Sprintf("checkpoint-%d.json", attempt))
		ctx, cancel := context.WithCancel(context.Background())
		m, err := keymigrate.New(s, "comments-19-digit", oldT, newT, cancelAtRow(100, cancel))
		if err != nil {
			t.Fatal(err)
		}
		prog, err := m.Backfill(ctx, keymigrate.WithRanges(1), keymigrate.WithConcurrency(1), keymigrate.WithCheckpoint(cp))
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("attempt %d: cancelled backfill returned %v (%+v)", attempt, err, prog)
		}
		partial := count(t, s, "comments_v2")
		cpText, _ := os.ReadFile(cp)
		resumed, err := plain.Backfill(context.Background(), keymigrate.WithRanges(1), keymigrate.WithCheckpoint(cp))
		if err != nil {
			t.Fatalf("attempt %d: resume: %v", attempt, err)
		}
		rep, verr := plain.Verify(context.Background())
		if got := count(t, s, "comments_v2"); got != n || verr != nil || !rep.OK() {
			t.Fatalf("attempt %d: cancelled at row 100 of %d (one range): the cancelled run returned %v with %+v, "+
				"left %d rows and the checkpoint %s; the resumed run copied %+v; the new table holds %d of %d rows; verify: %v %v",
				attempt, n, context.Canceled, prog, partial, cpText, resumed, got, n, rep, verr)
		}
		t.Logf("attempt %d: cancelled run left %d rows, checkpoint %s; resume copied %d rows", attempt, partial, cpText, resumed.Rows)
	}
}

// TestKeymigrateFailedRangeDoesNotCheckpointOthers: one range of a Backfill fails
// (here the Transform rejects a row: ErrInvalidKey); Backfill then cancels the ranges
// being copied alongside it. None of them may be recorded as done in the checkpoint:
// once the bad row is fixed, the backfill resumed from its checkpoint must copy every
// row.
func TestKeymigrateFailedRangeDoesNotCheckpointOthers(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	const n = 400
	fillPosts(t, s, n)
	oldT, newT := describe(t, s, ks, "comments_v1"), describe(t, s, ks, "comments_v2")
	plain := newMigration(t, s, ks, toSortable)
	dir := t.TempDir()
	for attempt := 1; attempt <= 16; attempt++ {
		harness.Exec(t, s, `TRUNCATE comments_v2`)
		cp := filepath.Join(dir, fmt.Sprintf("checkpoint-%d.json", attempt))
		var calls atomic.Int64
		var rejected atomic.Bool
		tr := func(row map[string]any) (map[string]any, error) {
			switch c := calls.Add(1); {
			case c == 60:
				rejected.Store(true)
				time.Sleep(300 * time.Millisecond) // the other range's writes in flight end
				return nil, fmt.Errorf("row %v rejected", row["comment_key"])
			case rejected.Load():
				time.Sleep(600 * time.Millisecond) // the other range is between rows when it is cancelled
			}
			return toSortable(row)
		}
		m, err := keymigrate.New(s, "comments-19-digit", oldT, newT, tr)
		if err != nil {
			t.Fatal(err)
		}
		prog, runErr := m.Backfill(context.Background(), keymigrate.WithRanges(2), keymigrate.WithConcurrency(2), keymigrate.WithCheckpoint(cp))
		if !errors.Is(runErr, keymigrate.ErrInvalidKey) {
			t.Fatalf("attempt %d: backfill with a rejected row returned %v (%+v)", attempt, runErr, prog)
		}
		partial := count(t, s, "comments_v2")
		cpText, _ := os.ReadFile(cp)
		resumed, err := plain.Backfill(context.Background(), keymigrate.WithRanges(2), keymigrate.WithCheckpoint(cp))
		if err != nil {
			t.Fatalf("attempt %d: resume: %v", attempt, err)
		}
		rep, verr := plain.Verify(context.Background())
		if got := count(t, s, "comments_v2"); got != n || verr != nil || !rep.OK() {
			t.Fatalf("attempt %d: the failed run returned %v with %+v, left %d rows and the checkpoint %s; "+
				"the resumed run copied %+v; the new table holds %d of %d rows; verify: %v %v",
				attempt, runErr, prog, partial, cpText, resumed, got, n, rep, verr)
		}
		t.Logf("attempt %d: failed run left %d rows, checkpoint %s; resume copied %d rows", attempt, partial, cpText, resumed.Rows)
	}
}

// TestKeymigrateWorkerCancelGivesLeaseBack: a worker whose ctx is cancelled in the
// middle of a range gives its lease back (RunWorker's doc: "When ctx is cancelled the
// worker stops, gives its lease back"): the lease table holds the range as free, not
// claimed for the rest of the lease TTL.
func TestKeymigrateWorkerCancelGivesLeaseBack(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	const n = 300
	fillPosts(t, s, n)
	oldT, newT := describe(t, s, ks, "comments_v1"), describe(t, s, ks, "comments_v2")
	for attempt := 1; attempt <= 16; attempt++ {
		ctx, cancel := context.WithCancel(context.Background())
		m, err := keymigrate.New(s, fmt.Sprint("cancel-", attempt), oldT, newT, cancelAtRow(100, cancel))
		if err != nil {
			t.Fatal(err)
		}
		rep, runErr := m.RunWorker(ctx, keymigrate.WorkerRanges(1), keymigrate.WorkerLeaseTTL(60*time.Second))
		cancel()
		if !errors.Is(runErr, context.Canceled) {
			t.Fatalf("attempt %d: cancelled worker returned %v (%+v)", attempt, runErr, rep)
		}
		st, err := m.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r := st.Ranges[0]; r.State != "free" {
			t.Fatalf("attempt %d: worker cancelled at row 100 of %d returned %v, report %+v; "+
				"the lease table holds range 0 as %q by %s (%d rows, lease left %v): not given back, other workers wait for the TTL",
				attempt, n, runErr, rep, r.State, r.Owner, r.Rows, r.LeaseLeft)
		}
		t.Logf("attempt %d: report %+v; range 0 %q", attempt, rep, st.Ranges[0].State)
	}
}

// TestKeymigrateStaticListCopiedOnce: a non-frozen list in a static column is one
// cell per partition, shared by its rows; Backfill copies each row of the partition, and
// must leave the list as in the source, not once per row. Cassandra refuses
// the row-level read of a static column's write time (SELECT MAXWRITETIME(s) … WHERE
// p = ? AND c = ? — "Cannot restrict clustering columns when selecting only static
// columns"), which once made such a table impossible to backfill; and rows of one
// partition in flight at once would each append it.
func TestKeymigrateStaticListCopiedOnce(t *testing.T) {
	if before50() {
		t.Skipf("Cassandra %s: Backfill of a non-frozen list needs 5.0", node.Version())
	}
	s, ks := node.Keyspace(t)
	harness.Exec(t, s,
		`CREATE TABLE sl_v1 (p int, c int, s list<int> static, v int, PRIMARY KEY (p, c))`,
		`CREATE TABLE sl_v2 (p text, c int, s list<int> static, v int, PRIMARY KEY (p, c))`)
	const parts, rows = 4, 20
	for p := 0; p < parts; p++ {
		//cqlsafe:ignore list-assignment setup rows, written once
		if err := s.Query(`INSERT INTO sl_v1 (p, s) VALUES (?, [1, 2]) USING TIMESTAMP 1000`, p).Exec(); err != nil {
			t.Fatal(err)
		}
		for c := 0; c < rows; c++ {
			if err := s.Query(`INSERT INTO sl_v1 (p, c, v) VALUES (?, ?, ?) USING TIMESTAMP 2000`, p, c, c).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr := func(row map[string]any) (map[string]any, error) {
		return map[string]any{"p": fmt.Sprint(row["p"]), "c": row["c"]}, nil
	}
	m, err := keymigrate.New(s, "static-list", describe(t, s, ks, "sl_v1"), describe(t, s, ks, "sl_v2"), tr)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := m.Backfill(context.Background(), keymigrate.WithRanges(4))
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		for p := 0; p < parts; p++ {
			var l []int
			var wt int64
			if err := s.Query(`SELECT s, WRITETIME(s) FROM sl_v2 WHERE p = ? LIMIT 1`, fmt.Sprint(p)).Scan(&l, &wt); err != nil {
				// WRITETIME of a non-frozen collection is refused: read MAXWRITETIME.
				if err := s.Query(`SELECT s, MAXWRITETIME(s) FROM sl_v2 WHERE p = ? LIMIT 1`, fmt.Sprint(p)).Scan(&l, &wt); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(l, []int{1, 2}) || wt != 1000 {
				rep, verr := m.Verify(context.Background())
				t.Fatalf("partition %d: static list %v at MAXWRITETIME %d after %s (%+v), want [1 2] at 1000; verify: %v %v",
					p, l, wt, when, prog, rep, verr)
			}
		}
	}
	check("one backfill")
	// Copied again (a range taken over, a backfill re-run): still once.
	if prog, err = m.Backfill(context.Background(), keymigrate.WithRanges(4), keymigrate.WithRowsInFlight(64)); err != nil {
		t.Fatal(err)
	}
	check("a second backfill")
	if rep, err := m.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep, err)
	}
}
