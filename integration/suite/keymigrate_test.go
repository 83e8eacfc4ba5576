package suite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/keymigrate"
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

// TestKeyMigrationFieldReport: comment keys padded to 10 digits mis-sort once ticks
// outgrow them; migrated to 19 digits the new table sorts correctly and holds every row
// once.
func TestKeyMigrationFieldReport(t *testing.T) {
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

// TestKeyMigrationBackfillRacesDualWrites: rows updated through DualWrite while the
// backfill runs end with the newer value in the new table.
func TestKeyMigrationBackfillRacesDualWrites(t *testing.T) {
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

// TestKeyMigrationResume: the backfill is killed midway and resumed from its checkpoint:
// no row is missing or duplicated.
func TestKeyMigrationResume(t *testing.T) {
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

// TestKeyMigrationBadInput: typed errors, nothing written.
func TestKeyMigrationBadInput(t *testing.T) {
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
