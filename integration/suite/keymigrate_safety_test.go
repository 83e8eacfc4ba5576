package suite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/retry"
)

// kvTables creates kv_v1 and kv_v2 with scalar, list, frozen list and set columns;
// with is appended to kv_v2's definition (table options).
func kvTables(t testing.TB, s *gocql.Session, with string) {
	t.Helper()
	const cols = `(id int, k text, n int, s text, b boolean, l list<int>, fl frozen<list<int>>, st set<int>, PRIMARY KEY (id, k))`
	harness.Exec(t, s, `CREATE TABLE kv_v1 `+cols, `CREATE TABLE kv_v2 `+cols+" "+with)
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

// TestKeyMigrationTypedNilIsUnset: a typed nil pointer in DualWrite leaves the column
// untouched in both tables, like an absent column.
func TestKeyMigrationTypedNilIsUnset(t *testing.T) {
	s, ks := node.Keyspace(t)
	kvTables(t, s, "")
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

// TestKeyMigrationVerifyZeroVsNull: a 0, "" or false in the old table that is NULL in the
// new one is a difference.
func TestKeyMigrationVerifyZeroVsNull(t *testing.T) {
	s, ks := node.Keyspace(t)
	kvTables(t, s, "")
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

// TestKeyMigrationBackfillInheritsDefaultTTL: cells without a TTL copied into a table
// with default_time_to_live get that default, as a fresh write would; cells with a TTL
// keep what remains of theirs.
func TestKeyMigrationBackfillInheritsDefaultTTL(t *testing.T) {
	s, ks := node.Keyspace(t)
	kvTables(t, s, "WITH default_time_to_live = 600")
	harness.Exec(t, s,
		`INSERT INTO kv_v1 (id, k, s, st) VALUES (1, 'plain', 'x', {1, 2})`,
		`INSERT INTO kv_v1 (id, k, s) VALUES (2, 'ttl', 'y') USING TTL 3600`)
	if _, err := kvMigration(t, s, ks).Backfill(context.Background(), keymigrate.WithRanges(4)); err != nil {
		t.Fatal(err)
	}
	var plain, withTTL *int
	var set []int
	if err := s.Query(`SELECT TTL(s), TTL(st) FROM kv_v2 WHERE id = 1 AND k = 'n-plain'`).Scan(&plain, &set); err != nil {
		t.Fatal(err)
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

// TestKeyMigrationListsNotDuplicated: re-copying rows with non-frozen lists (a re-run or
// resumed backfill; a backfill after a dual write of the same row) leaves each list as
// the source holds it.
func TestKeyMigrationListsNotDuplicated(t *testing.T) {
	s, ks := node.Keyspace(t)
	kvTables(t, s, "")
	const n = 60
	for i := 0; i < n; i++ {
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

// TestKeyMigrationListWritesNotRetried: the response to an applied write carrying a
// non-frozen list is dropped: neither DualWrite nor Backfill re-sends it (that would
// duplicate the list); the error is an unknown outcome, and re-running the backfill
// completes without duplicates.
func TestKeyMigrationListWritesNotRetried(t *testing.T) {
	s0, ks := node.Keyspace(t)
	kvTables(t, s0, "")
	for i := 0; i < 20; i++ {
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
