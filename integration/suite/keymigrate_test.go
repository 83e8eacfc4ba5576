package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
	"github.com/gocql/gocql"
)

// commentTables creates the field report's tables: comment keys padded to 10 digits in
// v1, full-width sortable keys in v2.
func commentTables(t testing.TB, s *gocql.Session) {
	t.Helper()
	harness.Exec(t, s,
		`CREATE TABLE comments_v1 (post_id text, comment_key text, author text, body text, PRIMARY KEY (post_id, comment_key))`,
		`CREATE TABLE comments_v2 (post_id text, comment_key text, author text, body text, PRIMARY KEY (post_id, comment_key))`)
}

func pad10(ticks int64) string { return fmt.Sprintf("%010d", ticks) }

// toSortable is the migration's transform: parse the 10-digit-padded ticks, re-encode
// them at full int64 width.
func toSortable(old map[string]any) (map[string]any, error) {
	key, _ := old["comment_key"].(string)
	ticks, err := strconv.ParseInt(key, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("comment_key %q: %w", key, err)
	}
	return map[string]any{"post_id": old["post_id"], "comment_key": clientid.SortableInt64(ticks)}, nil
}

func newMigration(t testing.TB, s *gocql.Session, ks string, tr keymigrate.Transform) *keymigrate.Migration {
	t.Helper()
	m, err := keymigrate.New(s, "comments-19-digit", describe(t, s, ks, "comments_v1"), describe(t, s, ks, "comments_v2"), tr)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func count(t testing.TB, s *gocql.Session, table string) int {
	t.Helper()
	var n int
	if err := s.Query(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKeymigrateFieldReport: comment keys padded to 10 digits mis-sort once ticks
// outgrow them; migrated to 19 digits the new table sorts correctly and holds every row
// once.
func TestKeymigrateFieldReport(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	ticks := []int64{5, 9_999_999_998, 9_999_999_999, 10_000_000_000, 12_345_678_901, 99_999_999_999}
	for i, tk := range ticks {
		if err := s.Query(`INSERT INTO comments_v1 (post_id, comment_key, author, body) VALUES ('p1', ?, ?, ?)`, pad10(tk), "a", fmt.Sprint("c", i)).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for p := 0; p < 50; p++ {
		if err := s.Query(`INSERT INTO comments_v1 (post_id, comment_key, body) VALUES (?, ?, 'x')`, fmt.Sprint("other", p), pad10(int64(p))).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(table string) []string {
		var out []string
		iter := s.Query(`SELECT body FROM ` + table + ` WHERE post_id = 'p1'`).Iter()
		var b string
		for iter.Scan(&b) {
			out = append(out, b)
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := []string{"c0", "c1", "c2", "c3", "c4", "c5"} // numeric order
	if got := read("comments_v1"); slices.Equal(got, want) {
		t.Fatal("expected the 10-digit keys to mis-sort (the bug this migration fixes)")
	}
	m := newMigration(t, s, ks, toSortable)
	prog, err := m.Backfill(context.Background(), keymigrate.WithRanges(16))
	if err != nil {
		t.Fatal(err)
	}
	if got := read("comments_v2"); !slices.Equal(got, want) {
		t.Fatalf("new table order %v, want %v", got, want)
	}
	rep, err := m.Verify(context.Background())
	if err != nil || !rep.OK() || rep.OldRows != 56 || prog.Rows != 56 {
		t.Fatalf("verify: %v %v (backfill %+v)", rep, err, prog)
	}
	t.Logf("old order %v; new order %v; %s", read("comments_v1"), read("comments_v2"), rep)
}

// TestKeymigrateBackfillRacesDualWrites: rows updated through DualWrite while the
// backfill runs end with the newer value in the new table.
func TestKeymigrateBackfillRacesDualWrites(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	const n = 1000
	for i := 0; i < n; i++ {
		if err := s.Query(`INSERT INTO comments_v1 (post_id, comment_key, body) VALUES (?, ?, 'old')`, fmt.Sprint("p", i%37), pad10(int64(i))).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	m := newMigration(t, s, ks, toSortable)
	updated := 0
	hook := func(done int) {
		if done != 3 {
			return
		}
		for i := 0; i < n; i += 10 { // rows in every range, copied or not yet
			if _, err := m.DualWrite(context.Background(), map[string]any{"post_id": fmt.Sprint("p", i%37), "comment_key": pad10(int64(i)), "body": "new"}); err != nil {
				t.Error(err)
			}
			updated++
		}
	}
	if _, err := m.Backfill(context.Background(), keymigrate.WithRanges(32), keymigrate.WithConcurrency(1), keymigrate.WithTestHookAfterRange(hook)); err != nil {
		t.Fatal(err)
	}
	var newer int
	iter := s.Query(`SELECT body FROM comments_v2`).Iter()
	var b string
	for iter.Scan(&b) {
		if b == "new" {
			newer++
		}
	}
	iter.Close()
	if updated != 100 || newer != updated || count(t, s, "comments_v2") != n {
		t.Fatalf("updated %d, new table has %d newer values and %d rows", updated, newer, count(t, s, "comments_v2"))
	}
}

// TestKeymigrateResume: the backfill is killed midway and resumed from its checkpoint:
// no row is missing or duplicated.
func TestKeymigrateResume(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	const n = 800
	for i := 0; i < n; i++ {
		if err := s.Query(`INSERT INTO comments_v1 (post_id, comment_key, body) VALUES (?, ?, 'b') USING TTL 3600`, fmt.Sprint("p", i%53), pad10(int64(i))).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	m := newMigration(t, s, ks, toSortable)
	cp := filepath.Join(t.TempDir(), "checkpoint.json")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := m.Backfill(ctx, keymigrate.WithRanges(40), keymigrate.WithConcurrency(2), keymigrate.WithCheckpoint(cp),
		keymigrate.WithTestHookAfterRange(func(done int) {
			if done >= 10 {
				cancel()
			}
		}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("killed backfill: %v", err)
	}
	partial := count(t, s, "comments_v2")
	if partial == 0 || partial >= n {
		t.Fatalf("after the kill the new table has %d of %d rows; want a part", partial, n)
	}
	prog, err := m.Backfill(context.Background(), keymigrate.WithRanges(40), keymigrate.WithCheckpoint(cp))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Verify(context.Background())
	if err != nil || !rep.OK() || rep.NewRows != n {
		t.Fatalf("after resume: %v %v", rep, err)
	}
	// TTL'd rows keep their remaining TTL.
	var ttl int
	if err := s.Query(`SELECT TTL(body) FROM comments_v2 WHERE post_id = 'p0' AND comment_key = ?`, clientid.SortableInt64(0)).Scan(&ttl); err != nil {
		t.Fatal(err)
	}
	if ttl <= 3500 || ttl > 3600 {
		t.Fatalf("TTL after copy %d, want the remaining part of 3600", ttl)
	}
	t.Logf("killed after %d of %d rows; resume copied %d rows in %d ranges; %s", partial, n, prog.Rows, prog.RangesDone, rep)
	// The checkpoint belongs to this migration only.
	other, _ := keymigrate.New(s, "another-migration", describe(t, s, ks, "comments_v1"), describe(t, s, ks, "comments_v2"), toSortable)
	if _, err := other.Backfill(context.Background(), keymigrate.WithRanges(40), keymigrate.WithCheckpoint(cp)); !errors.Is(err, keymigrate.ErrCheckpointMismatch) {
		t.Fatalf("foreign checkpoint: %v", err)
	}
}

// TestKeymigrateBadInput: typed errors, nothing written.
func TestKeymigrateBadInput(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	harness.Exec(t, s, `CREATE TABLE comments_v3 (post_id text, comment_key text, body text, PRIMARY KEY (post_id, comment_key))`)
	for i := 0; i < 20; i++ {
		if err := s.Query(`INSERT INTO comments_v1 (post_id, comment_key, body) VALUES ('p', ?, 'b')`, pad10(int64(i))).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := keymigrate.New(s, "x", describe(t, s, ks, "comments_v1"), describe(t, s, ks, "comments_v3"), toSortable); !errors.Is(err, keymigrate.ErrColumnMismatch) {
		t.Fatalf("different column set: %v", err)
	}
	invalid := newMigration(t, s, ks, func(old map[string]any) (map[string]any, error) {
		return map[string]any{"post_id": old["post_id"]}, nil // no comment_key
	})
	if _, err := invalid.Backfill(ctx); !errors.Is(err, keymigrate.ErrInvalidKey) {
		t.Fatalf("invalid key: %v", err)
	}
	if _, err := invalid.DualWrite(ctx, map[string]any{"post_id": "p", "comment_key": "0000000001", "body": "b"}); !errors.Is(err, keymigrate.ErrInvalidKey) {
		t.Fatalf("dual write with invalid key: %v", err)
	}
	if n := count(t, s, "comments_v2"); n != 0 {
		t.Fatalf("%d rows written for an invalid transform", n)
	}
	dup := newMigration(t, s, ks, func(old map[string]any) (map[string]any, error) {
		return map[string]any{"post_id": old["post_id"], "comment_key": "same"}, nil
	})
	if _, err := dup.Backfill(ctx, keymigrate.WithRanges(4)); !errors.Is(err, keymigrate.ErrDuplicateKey) {
		t.Fatalf("duplicate keys: %v", err)
	}
}

// TestKeymigrateDualDelete: rows deleted through DualDelete while the backfill runs
// are gone from both tables after it, and stay gone when the backfill re-copies.
func TestKeymigrateDualDelete(t *testing.T) {
	s, ks := node.Keyspace(t)
	kvTables(t, s, "", true)
	m := kvMigration(t, s, ks)
	ctx := context.Background()
	const n = 200
	for i := 0; i < n; i++ {
		if err := s.Query(`INSERT INTO kv_v1 (id, k, s) VALUES (?, 'a', 'v') USING TIMESTAMP 1000`, i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	// A row dual-written (so present in both tables), then deleted during stage 1.
	if _, err := m.DualWrite(ctx, map[string]any{"id": n, "k": "a", "s": "dual"}); err != nil {
		t.Fatal(err)
	}
	deleted := 0
	hook := func(done int) {
		if done != 4 {
			return
		}
		for i := 0; i <= n; i += 10 { // ranges already copied and not yet copied
			if _, err := m.DualDelete(ctx, map[string]any{"id": i, "k": "a"}); err != nil {
				t.Error(err)
			}
			deleted++
		}
	}
	if _, err := m.Backfill(ctx, keymigrate.WithRanges(16), keymigrate.WithConcurrency(1), keymigrate.WithTestHookAfterRange(hook)); err != nil {
		t.Fatal(err)
	}
	// A copy that read the row before the delete and writes it after carries the old
	// WRITETIME (1000): the delete in the new table wins.
	if err := s.Query(`INSERT INTO kv_v2 (id, k, s) VALUES (10, 'n-a', 'v') USING TIMESTAMP 1000`).Exec(); err != nil {
		t.Fatal(err)
	}
	// Re-copying everything resurrects nothing.
	if _, err := m.Backfill(ctx, keymigrate.WithRanges(16)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= n; i += 10 {
		for _, row := range [][2]string{{"kv_v1", "a"}, {"kv_v2", "n-a"}} {
			if _, _, _, found := kvRow(t, s, row[0], i, row[1]); found {
				t.Errorf("row %d deleted with DualDelete is in %s", i, row[0])
			}
		}
	}
	rep, err := m.Verify(ctx)
	if err != nil || !rep.OK() || rep.OldRows != int64(n+1-deleted) {
		t.Fatalf("verify after dual deletes: %v %v (deleted %d)", rep, err, deleted)
	}
	// The hazard DualDelete closes: a delete of the old table alone leaves the row in the
	// new one, where it comes back at cut-over.
	if _, err := m.DualWrite(ctx, map[string]any{"id": 999, "k": "a", "s": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`DELETE FROM kv_v1 WHERE id = 999 AND k = 'a'`).Exec(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, found := kvRow(t, s, "kv_v2", 999, "n-a"); !found {
		t.Fatal("an old-table-only delete removed the new row too?")
	}
	if _, err := m.DualDelete(ctx, map[string]any{"id": 999}); !errors.Is(err, overwrite.ErrMissingKey) {
		t.Fatalf("DualDelete without the full key: %v", err)
	}
}

// kvTables creates kv_v1 and kv_v2 with scalar, list, frozen list and set columns;
// with is appended to kv_v2's definition (table options). For a test that backfills
// (backfill set), l and st are frozen before Cassandra 5.0, where Backfill refuses
// non-frozen collections (TestKeymigrateBackfillUnsupportedBefore50). It returns
// whether they are.
func kvTables(t testing.TB, s *gocql.Session, with string, backfill bool) (frozen bool) {
	t.Helper()
	l, st := "list<int>", "set<int>"
	if frozen = backfill && before50(); frozen {
		l, st = "frozen<list<int>>", "frozen<set<int>>"
	}
	cols := `(id int, k text, n int, s text, b boolean, l ` + l + `, fl frozen<list<int>>, st ` + st + `, PRIMARY KEY (id, k))`
	harness.Exec(t, s, `CREATE TABLE kv_v1 `+cols, `CREATE TABLE kv_v2 `+cols+" "+with)
	return frozen
}

// kvKey is the kv migration's transform: the clustering key gets a prefix.
func kvKey(old map[string]any) (map[string]any, error) {
	k, ok := old["k"].(string)
	if !ok {
		return nil, fmt.Errorf("k is %T", old["k"])
	}
	return map[string]any{"id": old["id"], "k": "n-" + k}, nil
}

func kvMigration(t testing.TB, s *gocql.Session, ks string, opts ...keymigrate.Option) *keymigrate.Migration {
	t.Helper()
	m, err := keymigrate.New(s, "kv", describe(t, s, ks, "kv_v1"), describe(t, s, ks, "kv_v2"), kvKey, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// kvRow reads one row's n, s and l (nil pointers for nulls); found is false when the
// row does not exist.
func kvRow(t testing.TB, s *gocql.Session, table string, id int, k string) (n *int, str *string, l []int, found bool) {
	t.Helper()
	err := s.Query(`SELECT n, s, l FROM `+table+` WHERE id = ? AND k = ?`, id, k).Scan(&n, &str, &l)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, nil, nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return n, str, l, true
}

// TestKeymigrateTypedNilIsUnset: a typed nil pointer in DualWrite leaves the column
// untouched in both tables, like an absent column.
func TestKeymigrateTypedNilIsUnset(t *testing.T) {
	s, ks := node.Keyspace(t)
	kvTables(t, s, "", false)
	m := kvMigration(t, s, ks)
	ctx := context.Background()
	if _, err := m.DualWrite(ctx, map[string]any{"id": 1, "k": "a", "n": 5, "s": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DualWrite(ctx, map[string]any{"id": 1, "k": "a", "n": (*int)(nil), "s": (*string)(nil), "b": true}); err != nil {
		t.Fatal(err)
	}
	for _, row := range [][2]string{{"kv_v1", "a"}, {"kv_v2", "n-a"}} {
		n, str, _, found := kvRow(t, s, row[0], 1, row[1])
		if !found || n == nil || *n != 5 || str == nil || *str != "x" {
			t.Errorf("%s after a DualWrite with typed nil pointers: found %v, n %v, s %v; want 5 and x kept", row[0], found, n, str)
		}
	}
}

// TestKeymigrateVerifyZeroVsNull: a 0, "" or false in the old table that is NULL in the
// new one is a difference.
func TestKeymigrateVerifyZeroVsNull(t *testing.T) {
	s, ks := node.Keyspace(t)
	kvTables(t, s, "", false)
	harness.Exec(t, s,
		`INSERT INTO kv_v1 (id, k, n, s, b) VALUES (1, 'zero', 0, '', false)`,
		`INSERT INTO kv_v2 (id, k) VALUES (1, 'n-zero')`, // lost to NULL
		`INSERT INTO kv_v1 (id, k, n) VALUES (2, 'n', 0)`,
		`INSERT INTO kv_v2 (id, k) VALUES (2, 'n-n')`,
		`INSERT INTO kv_v1 (id, k, b) VALUES (3, 'b', false)`,
		`INSERT INTO kv_v2 (id, k) VALUES (3, 'n-b')`,
		`INSERT INTO kv_v1 (id, k, n, s, b, fl) VALUES (4, 'same', 0, '', false, [])`, // equal zeros
		`INSERT INTO kv_v2 (id, k, n, s, b, fl) VALUES (4, 'n-same', 0, '', false, [])`,
		`INSERT INTO kv_v1 (id, k) VALUES (5, 'null')`, // equal nulls
		`INSERT INTO kv_v2 (id, k) VALUES (5, 'n-null')`,
		`INSERT INTO kv_v1 (id, k, l) VALUES (6, 'list', [1, 2])`, // equal lists
		`INSERT INTO kv_v2 (id, k, l) VALUES (6, 'n-list', [1, 2])`,
	)
	rep, err := kvMigration(t, s, ks).Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var diff []any
	for _, d := range rep.Diffs {
		diff = append(diff, d.OldKey[0])
	}
	slices.SortFunc(diff, func(a, b any) int { return a.(int) - b.(int) })
	if rep.Different != 3 || !slices.Equal(diff, []any{1, 2, 3}) || rep.OK() {
		t.Fatalf("verify: %v; rows reported different %v, want 1, 2, 3", rep, diff)
	}
}

// TestKeymigrateBackfillInheritsDefaultTTL: cells without a TTL copied into a table
// with default_time_to_live get that default, as a fresh write would; cells with a TTL
// keep what remains of theirs.
func TestKeymigrateBackfillInheritsDefaultTTL(t *testing.T) {
	s, ks := node.Keyspace(t)
	var set []int
	var setTTL any = &set // a non-frozen set: a TTL per element
	var frozenTTL *int
	if kvTables(t, s, "WITH default_time_to_live = 600", true) {
		setTTL = &frozenTTL // a frozen set: one cell
	}
	harness.Exec(t, s,
		`INSERT INTO kv_v1 (id, k, s, st) VALUES (1, 'plain', 'x', {1, 2})`,
		`INSERT INTO kv_v1 (id, k, s) VALUES (2, 'ttl', 'y') USING TTL 3600`)
	if _, err := kvMigration(t, s, ks).Backfill(context.Background(), keymigrate.WithRanges(4)); err != nil {
		t.Fatal(err)
	}
	var plain, withTTL *int
	if err := s.Query(`SELECT TTL(s), TTL(st) FROM kv_v2 WHERE id = 1 AND k = 'n-plain'`).Scan(&plain, setTTL); err != nil {
		t.Fatal(err)
	}
	if frozenTTL != nil {
		set = []int{*frozenTTL, *frozenTTL}
	}
	if err := s.Query(`SELECT TTL(s) FROM kv_v2 WHERE id = 2 AND k = 'n-ttl'`).Scan(&withTTL); err != nil {
		t.Fatal(err)
	}
	if plain == nil || *plain <= 500 || *plain > 600 {
		t.Errorf("TTL(s) of a cell without TTL after the copy: %v, want the table default 600", plain)
	}
	if len(set) != 2 || set[0] <= 500 || set[0] > 600 || set[1] <= 500 || set[1] > 600 {
		t.Errorf("TTL(st) of a set without TTL after the copy: %v, want the table default 600", set)
	}
	if withTTL == nil || *withTTL <= 3500 || *withTTL > 3600 {
		t.Errorf("TTL(s) of a cell with TTL 3600 after the copy: %v", withTTL)
	}
}

// TestKeymigrateListsNotDuplicated: re-copying rows with non-frozen lists (a re-run or
// resumed backfill; a backfill after a dual write of the same row) leaves each list as
// the source holds it.
func TestKeymigrateListsNotDuplicated(t *testing.T) {
	if before50() {
		t.Skipf("Cassandra %s: Backfill of a non-frozen list needs its write times (5.0) and is refused (TestKeymigrateBackfillUnsupportedBefore50)", node.Version())
	}
	s, ks := node.Keyspace(t)
	kvTables(t, s, "", false)
	const n = 60
	for i := 0; i < n; i++ {
		//cqlsafe:ignore list-assignment setup rows, written once
		if err := s.Query(`INSERT INTO kv_v1 (id, k, s, l, fl, st) VALUES (?, 'a', 'v', [1, 2], [1, 2], {1, 2})`, i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	m := kvMigration(t, s, ks)
	ctx := context.Background()
	if _, err := m.DualWrite(ctx, map[string]any{"id": n, "k": "a", "l": []int{7, 8}}); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if _, err := m.Backfill(ctx, keymigrate.WithRanges(8)); err != nil {
			t.Fatal(err)
		}
	}
	dup := 0
	for i := 0; i < n; i++ {
		if _, _, l, _ := kvRow(t, s, "kv_v2", i, "n-a"); !slices.Equal(l, []int{1, 2}) {
			if dup == 0 {
				t.Errorf("row %d: list %v after two backfills, want [1 2]", i, l)
			}
			dup++
		}
	}
	if _, _, l, _ := kvRow(t, s, "kv_v2", n, "n-a"); !slices.Equal(l, []int{7, 8}) {
		t.Errorf("dual-written row: list %v after backfills, want [7 8]", l)
	}
	var fl []int
	var st []int
	if err := s.Query(`SELECT fl, st FROM kv_v2 WHERE id = 0 AND k = 'n-a'`).Scan(&fl, &st); err != nil || !slices.Equal(fl, []int{1, 2}) || !slices.Equal(st, []int{1, 2}) {
		t.Errorf("frozen list %v, set %v (%v)", fl, st, err)
	}
	rep, err := m.Verify(ctx)
	if dup > 0 || err != nil || !rep.OK() {
		t.Fatalf("%d of %d lists duplicated; verify %v %v", dup, n, rep, err)
	}
}

// TestKeymigrateListWritesNotRetried: the response to an applied write carrying a
// non-frozen list is dropped: neither DualWrite nor Backfill re-sends it (that would
// duplicate the list); the error is an unknown outcome, and re-running the backfill
// completes without duplicates.
func TestKeymigrateListWritesNotRetried(t *testing.T) {
	s0, ks := node.Keyspace(t)
	kvTables(t, s0, "", false)
	for i := 0; i < 20; i++ {
		//cqlsafe:ignore list-assignment setup rows, written once
		if err := s0.Query(`INSERT INTO kv_v1 (id, k, l) VALUES (?, 'a', [1, 2])`, i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	s, px := proxied(t, ks, 300*time.Millisecond)
	backoff := retry.WithBackoff(time.Millisecond, 10*time.Millisecond)
	m := kvMigration(t, s, ks, keymigrate.WithRetryPolicy(retry.NewPolicy(backoff)))
	// A policy that cannot see column types, given a list value it cannot recognise as
	// one (a gocql.Marshaler), judges the write repeatable: keymigrate, which knows l
	// is a non-frozen list, must still not let it re-send.
	blind := kvMigration(t, s, ks, keymigrate.WithRetryPolicy(retry.NewPolicy(backoff, retry.WithSchema(blindSchema{}))))
	ctx := context.Background()
	for _, tc := range []struct {
		id  int
		m   *keymigrate.Migration
		val any
	}{{100, m, []int{7, 8}}, {101, blind, marshaledList{[]int{7, 8}}}} {
		px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("kv_v2")))
		dropped := px.Stats().Dropped.Load()
		_, err := tc.m.DualWrite(ctx, map[string]any{"id": tc.id, "k": "a", "l": tc.val})
		if px.Stats().Dropped.Load() != dropped+1 {
			t.Fatalf("%d responses dropped, want 1", px.Stats().Dropped.Load()-dropped)
		}
		for _, row := range [][2]string{{"kv_v1", "a"}, {"kv_v2", "n-a"}} {
			if l := settledList(t, s0, row[0], tc.id, row[1]); !slices.Equal(l, []int{7, 8}) {
				t.Errorf("row %d in %s: list %v after a dual write whose response was dropped, want [7 8]", tc.id, row[0], l)
			}
		}
		if !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, retry.ErrNotIdempotent) {
			t.Errorf("row %d: dual write with a dropped response: %v, want an unknown outcome, not retried", tc.id, err)
		}
	}
	if before50() {
		// Backfill of a non-frozen list needs its write times (5.0): refused there, see
		// TestKeymigrateBackfillUnsupportedBefore50. The dual writes above are checked.
		if _, err := blind.Backfill(ctx, keymigrate.WithRanges(4)); !errors.Is(err, table.ErrUnsupported) {
			t.Fatalf("Backfill on %s: %v, want table.ErrUnsupported", node.Version(), err)
		}
		return
	}
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("kv_v2")))
	_, err := blind.Backfill(ctx, keymigrate.WithRanges(4), keymigrate.WithConcurrency(1))
	if !errors.Is(err, retry.ErrOutcomeUnknown) || !errors.Is(err, retry.ErrNotIdempotent) {
		t.Errorf("backfill with a dropped response: %v, want an unknown outcome, not retried", err)
	}
	// Re-run on a direct session (a list copy that times out is, rightly, not retried).
	direct := kvMigration(t, s0, ks)
	if _, err := direct.Backfill(ctx, keymigrate.WithRanges(4)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, _, l, _ := kvRow(t, s0, "kv_v2", i, "n-a"); !slices.Equal(l, []int{1, 2}) {
			t.Errorf("row %d: list %v, want [1 2]", i, l)
		}
	}
	if rep, err := direct.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep, err)
	}
}

// settledList reads a row's list once a write whose response was dropped has landed:
// on a busy node it may apply after the client timed out.
func settledList(t testing.TB, s *gocql.Session, table string, id int, k string) []int {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, _, l, _ := kvRow(t, s, table, id, k)
		if len(l) > 0 || time.Now().After(deadline) {
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// blindSchema knows no column: a policy with it cannot tell a list from a scalar.
type blindSchema struct{}

func (blindSchema) ColumnKind(string, string, string) retry.ColumnKind { return retry.ColumnUnknown }

// marshaledList is a list value in a form a policy cannot recognise as a list.
type marshaledList struct{ elems []int }

func (l marshaledList) MarshalCQL(info gocql.TypeInfo) ([]byte, error) {
	return gocql.Marshal(info, l.elems)
}

// oddTables creates odd_v1 and odd_v2 (same columns, key (id, k blob)) with UDT
// (frozen and not), vector, tuple and blob columns, and returns their non-key columns
// for a SELECT. Before Cassandra 5.0 there is no vector type (v is left out), and for
// a backfill u and lu are frozen there: Backfill refuses non-frozen ones before 5.0
// (TestKeymigrateBackfillUnsupportedBefore50).
func oddTables(t testing.TB, s *gocql.Session, backfill bool) string {
	t.Helper()
	u, lu, v := "ua", "list<frozen<ua>>", " v vector<float, 3>,"
	sel := "u, fu, lu, v, tp, b, n"
	if before50() {
		v, sel = "", "u, fu, lu, tp, b, n"
		if backfill {
			u, lu = "frozen<ua>", "frozen<list<frozen<ua>>>"
		}
	}
	cols := `(id int, k blob, u ` + u + `, fu frozen<ua>, lu ` + lu + `,` + v + ` tp tuple<int, text>, b blob, n int, PRIMARY KEY (id, k))`
	harness.Exec(t, s, `CREATE TYPE ua (a int, b blob)`, `CREATE TABLE odd_v1 `+cols, `CREATE TABLE odd_v2 `+cols)
	return sel
}

// oddKey maps k to 0x00 || k: an empty blob key is a valid key, which the Transform
// must receive as []byte{}.
func oddKey(old map[string]any) (map[string]any, error) {
	k, ok := old["k"].([]byte)
	if !ok || k == nil {
		return nil, fmt.Errorf("k is %#v", old["k"])
	}
	return map[string]any{"id": old["id"], "k": append([]byte{0}, k...)}, nil
}

// TestKeymigrateDualWriteUDTTupleVector: DualWrite of rows with UDT, tuple and vector
// values, and of a row without them, writes both tables alike. Before: every UDT value
// was ErrBadValue, and any row failed with gocql's tuple arity error.
func TestKeymigrateDualWriteUDTTupleVector(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	sel := oddTables(t, s, false)
	m, err := keymigrate.New(s, "odd", describe(t, s, ks, "odd_v1"), describe(t, s, ks, "odd_v2"), oddKey)
	if err != nil {
		t.Fatal(err)
	}
	ua := map[string]any{"a": 1, "b": []byte{}}
	for _, row := range []map[string]any{
		{"id": 1, "k": []byte{1}, "n": 5},
		{"id": 2, "k": []byte{2}, "u": ua, "fu": ua, "lu": []map[string]any{ua}, "v": []float32{1, 2, 3}, "tp": []any{4, "x"}, "b": []byte{}},
	} {
		if before50() {
			delete(row, "v") // no vector type before 5.0
		}
		if _, err := m.DualWrite(ctx, row); err != nil {
			t.Fatalf("DualWrite(%v): %v", row, err)
		}
	}
	for id, want := range map[int]string{
		1: `{"u": null, "fu": null, "lu": null, "v": null, "tp": null, "b": null, "n": 5}`,
		2: `{"u": {"a": 1, "b": "0x"}, "fu": {"a": 1, "b": "0x"}, "lu": [{"a": 1, "b": "0x"}], "v": [1.0, 2.0, 3.0], "tp": [4, "x"], "b": "0x", "n": null}`,
	} {
		if before50() {
			want = strings.NewReplacer(`"v": null, `, "", `"v": [1.0, 2.0, 3.0], `, "").Replace(want)
		}
		for _, tbl := range []string{"odd_v1", "odd_v2"} {
			var got string
			if err := s.Query(`SELECT JSON `+sel+` FROM `+tbl+` WHERE id = ?`, id).Scan(&got); err != nil || got != want {
				t.Fatalf("%s id %d: %s (%v)\nwant %s", tbl, id, got, err, want)
			}
		}
	}
}

// TestKeymigrateBackfillUDTVectorTupleEmptyBlob: Backfill copies rows with UDT,
// vector, tuple and empty-blob cells byte for byte, including a row whose clustering
// key is an empty blob. Before: "no Go type for custom()", and an empty blob key
// reached the Transform as nil (ErrInvalidKey).
func TestKeymigrateBackfillUDTVectorTupleEmptyBlob(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	sel := oddTables(t, s, true)
	vCol, vVal := ", v", ", [1.5, 2.5, 3.5]"
	if before50() {
		vCol, vVal = "", "" // no vector type before 5.0
	}
	harness.Exec(t, s,
		`INSERT INTO odd_v1 (id, k, u, fu, lu`+vCol+`, tp, b, n) VALUES (1, 0x, {a: 1, b: 0x}, {a: 2, b: 0xff}, [{a: 3, b: 0x}]`+vVal+`, (4, 'x'), 0x, 5)`,
		`INSERT INTO odd_v1 (id, k, n) VALUES (2, 0x02, 6)`)
	m, err := keymigrate.New(s, "odd", describe(t, s, ks, "odd_v1"), describe(t, s, ks, "odd_v2"), oddKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Backfill(ctx, keymigrate.WithRanges(4)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id         int
		oldK, newK []byte
	}{{1, []byte{}, []byte{0}}, {2, []byte{2}, []byte{0, 2}}} {
		var old, cp string
		q := `SELECT JSON ` + sel + `, WRITETIME(n) AS wn FROM `
		if err := s.Query(q+`odd_v1 WHERE id = ? AND k = ?`, c.id, c.oldK).Scan(&old); err != nil {
			t.Fatal(err)
		}
		if err := s.Query(q+`odd_v2 WHERE id = ? AND k = ?`, c.id, c.newK).Scan(&cp); err != nil || cp != old {
			t.Fatalf("id %d: copy %s (%v)\nwant %s", c.id, cp, err, old)
		}
	}
}

// TestKeymigrateBackfillEmptyBlobKey: a row whose clustering key is an empty blob (0x)
// is copied; the Transform receives []byte{}. Before: it received nil and Backfill
// stopped with ErrInvalidKey.
func TestKeymigrateBackfillEmptyBlobKey(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE bk_v1 (id int, k blob, n int, PRIMARY KEY (id, k))`,
		`CREATE TABLE bk_v2 (id int, k blob, n int, PRIMARY KEY (id, k))`,
		`INSERT INTO bk_v1 (id, k, n) VALUES (1, 0x, 7)`)
	m, err := keymigrate.New(s, "bk", describe(t, s, ks, "bk_v1"), describe(t, s, ks, "bk_v2"), oddKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Backfill(ctx, keymigrate.WithRanges(4)); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.Query(`SELECT n FROM bk_v2 WHERE id = 1 AND k = 0x00`).Scan(&n); err != nil || n != 7 {
		t.Fatalf("copy: n=%d %v", n, err)
	}
}

// TestKeymigrateBackfillUnsupportedBefore50: before Cassandra 5.0, which cannot read the
// write times and TTLs of a non-frozen collection's cells, Backfill of a table with one
// returns a *table.UnsupportedError naming the column and the node's version before
// sending anything: no query reaches the node, nothing is copied, no checkpoint is
// written. DualWrite of the same tables works. Before: the server's untyped "Unknown
// function 'maxwritetime'" from the first range's scan. On 5.0 and later the other
// backfill tests cover these tables.
func TestKeymigrateBackfillUnsupportedBefore50(t *testing.T) {
	if !before50() {
		t.Skipf("Cassandra %s reads write times of non-frozen collections: nothing is refused", node.Version())
	}
	s, ks := node.Keyspace(t)
	kvTables(t, s, "", false)
	//cqlsafe:ignore list-assignment setup row, written once
	harness.Exec(t, s, `INSERT INTO kv_v1 (id, k, n, l, st) VALUES (1, 'a', 2, [1], {1}) USING TIMESTAMP 1000`)
	obs := &countingObserver{}
	cl := node.Cluster(ks)
	cl.QueryObserver, cl.BatchObserver = obs, obs
	counted, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer counted.Close()
	m := kvMigration(t, counted, ks)
	obs.queries.Store(0)
	cp := filepath.Join(t.TempDir(), "cp.json")
	_, err = m.Backfill(context.Background(), keymigrate.WithRanges(4), keymigrate.WithCheckpoint(cp))
	var ue *table.UnsupportedError
	if !errors.Is(err, table.ErrUnsupported) || !errors.As(err, &ue) || (ue.Column != "l" && ue.Column != "st") ||
		ue.Version != node.Version() || ue.Needs != "5.0" {
		t.Fatalf("Backfill on %s: %v, want a table.UnsupportedError for l or st", node.Version(), err)
	}
	if q, b := obs.queries.Load(), obs.batches.Load(); q != 0 || b != 0 {
		t.Fatalf("%d queries and %d batches sent before the refusal", q, b)
	}
	if _, err := os.Stat(cp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checkpoint written: %v", err)
	}
	if n := count(t, s, "kv_v2"); n != 0 {
		t.Fatalf("%d rows copied", n)
	}
	// The dual writes of the same tables are not refused.
	if _, err := m.DualWrite(context.Background(), map[string]any{"id": 2, "k": "b", "n": 3, "st": []int{4}}); err != nil {
		t.Fatal(err)
	}
	var st []int
	if err := s.Query(`SELECT st FROM kv_v2 WHERE id = 2 AND k = 'n-b'`).Scan(&st); err != nil || !slices.Equal(st, []int{4}) {
		t.Fatalf("dual-written set %v (%v)", st, err)
	}
}

// Tests of keymigrate's multi-worker backfill (RunWorker, Status): leases in Cassandra,
// takeover after a lease expires, copying a range twice, unknown LWT outcomes.

// fillPosts writes n comments over 40 posts into comments_v1.
func fillPosts(t *testing.T, s *gocql.Session, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := s.Query(`INSERT INTO comments_v1 (post_id, comment_key, author, body) VALUES (?, ?, ?, ?)`,
					fmt.Sprint("p", i%40), pad10(int64(i)), "a", fmt.Sprint("c", i)).Exec(); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestKeymigrateWorkersTakeOverExpiredLease: a range held by a worker that died (a lease
// nobody renews) is copied by the live workers once its TTL has passed; two workers
// finish every range, each range is done once, Verify is clean.
func TestKeymigrateWorkersTakeOverExpiredLease(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	fillPosts(t, s, 2000)
	m := newMigration(t, s, ks, toSortable)
	ctx := context.Background()
	if _, err := m.Status(ctx); err == nil {
		t.Fatal("status of a migration nobody started: no error")
	}
	// A first worker on an empty migration id creates the lease table and records the
	// migration; then a dead worker's claim of range 3 is planted, 4 s to live.
	opts := []keymigrate.WorkerOption{keymigrate.WorkerRanges(8), keymigrate.WorkerLeaseTTL(4 * time.Second)}
	harness.Exec(t, s, `CREATE TABLE IF NOT EXISTS keymigrate_leases (migration text, range int, attempt text, owner text, lease uuid, `+
		`state text, rows bigint, updated_at timestamp, ranges int, source text, target text, PRIMARY KEY ((migration, range), attempt))`)
	harness.Exec(t, s,
		fmt.Sprintf(`INSERT INTO keymigrate_leases (migration, range, attempt, ranges, source, target) VALUES ('comments-19-digit', -1, '', 8, '%s.comments_v1', '%s.comments_v2')`, ks, ks),
		`INSERT INTO keymigrate_leases (migration, range, attempt, owner, lease, state, rows, updated_at) VALUES ('comments-19-digit', 3, '', 'ghost', uuid(), 'claimed', 0, toTimestamp(now())) USING TTL 4`)
	planted := time.Now()
	st, err := m.Status(ctx)
	if err != nil || st.Claimed != 1 || st.Owners["ghost"] != 1 || st.Ranges[3].LeaseLeft <= 0 {
		t.Fatalf("status with the ghost's lease: %+v %v", st, err)
	}
	var mu sync.Mutex
	doneBy := map[int][]string{}
	var doneAt3 time.Time
	progress := keymigrate.WorkerProgress(func(e keymigrate.WorkerEvent) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == "done" {
			doneBy[e.Range] = append(doneBy[e.Range], e.Worker)
			if e.Range == 3 {
				doneAt3 = time.Now()
			}
		}
	})
	reps := make([]keymigrate.WorkerReport, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range reps {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			reps[i], errs[i] = m.RunWorker(ctx, append(opts, keymigrate.WorkerID(fmt.Sprint("w", i)), progress)...)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	if reps[0].Ranges+reps[1].Ranges != 8 || reps[0].Rows+reps[1].Rows != 2000 {
		t.Fatalf("reports %+v", reps)
	}
	for r := 0; r < 8; r++ {
		if len(doneBy[r]) != 1 {
			t.Errorf("range %d done by %v", r, doneBy[r])
		}
	}
	if d := doneAt3.Sub(planted); d < 3*time.Second {
		t.Errorf("range 3 done %v after the ghost's 4 s lease was planted: taken before it expired", d)
	}
	st, err = m.Status(ctx)
	if err != nil || !st.Complete() || st.Rows != 2000 || st.CopiedTwice() != 0 || st.Ranges[3].Owner == "ghost" {
		t.Fatalf("final status %v %+v %v", st, st.Ranges[3], err)
	}
	rep, err := m.Verify(ctx)
	if err != nil || !rep.OK() || rep.OldRows != 2000 {
		t.Fatalf("verify: %v %v", rep, err)
	}
	// A worker started with another ring split is refused.
	if _, err := m.RunWorker(ctx, keymigrate.WorkerRanges(16)); err == nil {
		t.Fatal("a worker with 16 ranges joined a migration recorded with 8")
	}
	t.Logf("%v; range 3 taken over %v after the ghost's claim; reports %+v", st, doneAt3.Sub(planted).Round(time.Millisecond), reps)
}

// TestKeymigrateWorkersCopyTwiceSameResult: copying every range twice (a second
// migration id over the same tables) leaves the new table cell for cell as once:
// values, WRITETIME, TTL, non-frozen lists not duplicated.
func TestKeymigrateWorkersCopyTwiceSameResult(t *testing.T) {
	s, ks := node.Keyspace(t)
	// Before 5.0 a table with a non-frozen collection cannot be backfilled (no
	// per-element write times: ErrUnsupported); there the copy is checked with frozen ones.
	list, set := "list<int>", "set<text>"
	if before50() {
		list, set = "frozen<list<int>>", "frozen<set<text>>"
	}
	harness.Exec(t, s,
		`CREATE TABLE r_v1 (p text, k text, v int, l `+list+`, st `+set+`, PRIMARY KEY (p, k))`,
		`CREATE TABLE r_v2 (p text, k text, v int, l `+list+`, st `+set+`, PRIMARY KEY (p, k))`)
	for i := 0; i < 300; i++ {
		if err := s.Query(`INSERT INTO r_v1 (p, k, v, l, st) VALUES (?, ?, ?, ?, ?) USING TIMESTAMP ? AND TTL ?`,
			fmt.Sprint("p", i%7), pad10(int64(i)), i, []int{i, i + 1}, []string{"x"}, int64(1_000_000+i), 100000+60*i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	old, nw := describe(t, s, ks, "r_v1"), describe(t, s, ks, "r_v2")
	tr := func(row map[string]any) (map[string]any, error) {
		k, err := toSortable(map[string]any{"post_id": row["p"], "comment_key": row["k"]})
		return map[string]any{"p": k["post_id"], "k": k["comment_key"]}, err
	}
	snapshot := func() map[string]string {
		out := map[string]string{}
		iter := s.Query(`SELECT p, k, v, l, st, WRITETIME(v), TTL(v) FROM r_v2`).Iter()
		var p, k string
		var v int
		var l []int
		var set []string
		var wt int64
		var ttl int
		for iter.Scan(&p, &k, &v, &l, &set, &wt, &ttl) {
			out[p+"/"+k] = fmt.Sprint(v, l, set, wt, (ttl+30)/60) // TTL to the minute: it counts down between reads
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ctx := context.Background()
	var first map[string]string
	for _, id := range []string{"once", "twice"} {
		m, err := keymigrate.New(s, id, old, nw, tr)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := m.RunWorker(ctx, keymigrate.WorkerRanges(4))
		if err != nil || rep.Rows != 300 || rep.Ranges != 4 {
			t.Fatalf("%s: %+v %v", id, rep, err)
		}
		got := snapshot()
		if first == nil {
			first = got
			if len(first) != 300 {
				t.Fatalf("copied %d rows", len(first))
			}
			continue
		}
		if !reflect.DeepEqual(first, got) {
			for k := range first {
				if first[k] != got[k] {
					t.Fatalf("row %s after one copy %s, after two %s", k, first[k], got[k])
				}
			}
		}
	}
	for k, v := range first {
		t.Logf("300 rows copied twice: values, WRITETIME, TTL and lists as after one copy (e.g. %s: %s)", k, v)
		break
	}
}

// TestKeymigrateWorkerLostLease: a worker whose lease another worker took stops copying
// that range and leaves it to the holder; when that lease expires the range is copied
// and marked done by the worker again.
func TestKeymigrateWorkerLostLease(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s)
	fillPosts(t, s, 600)
	m := newMigration(t, s, ks, toSortable)
	ctx := context.Background()
	stolen := false
	steal := keymigrate.WorkerProgress(func(e keymigrate.WorkerEvent) {
		if e.Kind != "claimed" || stolen {
			return
		}
		stolen = true
		// Another owner's claim replaces this worker's lease row (as if its lease had
		// expired and another worker claimed the range).
		harness.Exec(t, s, fmt.Sprintf(`INSERT INTO keymigrate_leases (migration, range, attempt, owner, lease, state, rows, updated_at) `+
			`VALUES ('comments-19-digit', %d, '', 'thief', uuid(), 'claimed', 0, toTimestamp(now())) USING TTL 3`, e.Range))
	})
	rep, err := m.RunWorker(ctx, keymigrate.WorkerRanges(2), keymigrate.WorkerLeaseTTL(3*time.Second), keymigrate.WorkerRate(300), steal)
	if err != nil || rep.Lost != 1 || rep.Ranges != 2 {
		t.Fatalf("report %+v, %v", rep, err)
	}
	st, err := m.Status(ctx)
	if err != nil || !st.Complete() || st.Rows != 600 || st.Takeovers != 1 || st.CopiedTwice() == 0 {
		t.Fatalf("status %v %v", st, err)
	}
	vr, err := m.Verify(ctx)
	if err != nil || !vr.OK() {
		t.Fatalf("verify %v %v", vr, err)
	}
	t.Logf("%+v; %v", rep, st)
}

// TestKeymigrateWorkerClaimOutcomeUnknown: the response to a worker's claim is lost
// after Cassandra applied it; the SERIAL read finds the claim applied and the worker
// copies the range at once instead of waiting for its own lease to expire.
func TestKeymigrateWorkerClaimOutcomeUnknown(t *testing.T) {
	_, ks := node.Keyspace(t)
	ps, px := proxied(t, ks, 2*time.Second)
	harness.Exec(t, ps, `CREATE TABLE comments_v1 (post_id text, comment_key text, author text, body text, PRIMARY KEY (post_id, comment_key))`,
		`CREATE TABLE comments_v2 (post_id text, comment_key text, author text, body text, PRIMARY KEY (post_id, comment_key))`)
	fillPosts(t, ps, 200)
	m := newMigration(t, ps, ks, toSortable)
	ctx := context.Background()
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("IF NOT EXISTS USING TTL")))
	start := time.Now()
	rep, err := m.RunWorker(ctx, keymigrate.WorkerRanges(1), keymigrate.WorkerLeaseTTL(30*time.Second))
	took := time.Since(start)
	if err != nil || rep.Ranges != 1 || rep.Rows != 200 {
		t.Fatalf("%+v %v", rep, err)
	}
	if px.Stats().Dropped.Load() != 1 {
		t.Fatalf("dropped %d responses, want the claim's", px.Stats().Dropped.Load())
	}
	if took > 20*time.Second {
		t.Fatalf("took %v: the worker waited for its own lease to expire instead of settling the claim", took)
	}
	t.Logf("claim response dropped, settled as applied; range copied in %v", took.Round(time.Millisecond))
}
