package suite

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

func tombstoneSetup(t testing.TB, opts ...tombstone.Option) (*gocql.Session, *overwrite.Table, *tombstone.Store) {
	t.Helper()
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE accounts (org text, id int, name text, balance bigint, active boolean, avatar blob,
		tags set<text>, history frozen<list<int>>, opened timestamp, ref uuid, PRIMARY KEY (org, id))`)
	if err := schema.ApplyTemplate(ctx, s, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	tbl := describe(t, s, ks, "accounts")
	st, err := tombstone.New(ctx, s, ks, "tombstones", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, tbl, st
}

var opened = time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
var ref = gocql.MustRandomUUID()

func insertAccount(t testing.TB, s *gocql.Session, id int, name string) {
	t.Helper()
	if err := s.Query(`INSERT INTO accounts (org, id, name, balance, active, avatar, tags, history, opened, ref) VALUES ('acme', ?, ?, 100, true, 0xCAFE, {'a', 'b'}, [1, 2], ?, ?)`,
		id, name, opened, ref).Exec(); err != nil {
		t.Fatal(err)
	}
}

type accountRow struct {
	Name    string
	Balance int64
	Active  bool
	Avatar  []byte
	Tags    []string
	History []int
	Opened  time.Time
	Ref     gocql.UUID
}

func readAccount(t testing.TB, s *gocql.Session, id int) (accountRow, bool) {
	t.Helper()
	var r accountRow
	err := s.Query(`SELECT name, balance, active, avatar, tags, history, opened, ref FROM accounts WHERE org = 'acme' AND id = ?`, id).
		Scan(&r.Name, &r.Balance, &r.Active, &r.Avatar, &r.Tags, &r.History, &r.Opened, &r.Ref)
	if errors.Is(err, gocql.ErrNotFound) {
		return r, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return r, true
}

// TestTombstoneDeleteUndelete: Delete then Undelete restores the exact values; a second
// Undelete restores nothing.
func TestTombstoneDeleteUndelete(t *testing.T) {
	s, tbl, st := tombstoneSetup(t)
	ctx := context.Background()
	insertAccount(t, s, 1, "Ada")
	before, _ := readAccount(t, s, 1)
	key := map[string]any{"org": "acme", "id": 1}
	rec, err := st.Delete(ctx, tbl, key, "cmd-bug-17")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := readAccount(t, s, 1); ok {
		t.Fatal("row still there after Delete")
	}
	if rec.Values["name"] != "Ada" || rec.Timestamp == 0 {
		t.Fatalf("record %+v", rec)
	}
	plan, err := st.Plan(ctx, tbl, key, "cmd-bug-17")
	if err != nil || !plan.Allowed || plan.Current != nil || plan.Restore["name"] != "Ada" {
		t.Fatalf("plan %+v %v", plan, err)
	}
	if _, err := st.Undelete(ctx, tbl, key, "cmd-bug-17"); err != nil {
		t.Fatal(err)
	}
	after, ok := readAccount(t, s, 1)
	if !ok {
		t.Fatal("row not restored")
	}
	if after.Name != before.Name || after.Balance != before.Balance || !after.Active || string(after.Avatar) != string(before.Avatar) ||
		len(after.Tags) != 2 || len(after.History) != 2 || !after.Opened.Equal(before.Opened) || after.Ref != before.Ref {
		t.Fatalf("restored %+v, was %+v", after, before)
	}
	if _, err := st.Undelete(ctx, tbl, key, "cmd-bug-17"); !errors.Is(err, tombstone.ErrNoTombstone) {
		t.Fatalf("second Undelete: %v, want ErrNoTombstone", err)
	}
	recs, _ := st.List(ctx, tbl, key)
	if len(recs) != 2 || recs[0].Action != tombstone.ActionUndelete || recs[1].Action != tombstone.ActionDelete {
		t.Fatalf("history %+v", recs)
	}
}

// TestTombstoneRacingWriteSurvives: a write that lands between Delete's read and its
// delete survives; the tombstone holds exactly what was deleted.
func TestTombstoneRacingWriteSurvives(t *testing.T) {
	var s *gocql.Session
	hook := func() {
		if err := s.Query(`UPDATE accounts SET name = 'racer' WHERE org = 'acme' AND id = 2`).Exec(); err != nil {
			panic(err)
		}
	}
	s, tbl, st := tombstoneSetup(t, tombstone.WithHookAfterRead(func() { hook() }))
	insertAccount(t, s, 2, "Bob")
	rec, err := st.Delete(context.Background(), tbl, map[string]any{"org": "acme", "id": 2}, "cmd-1")
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var balance *int64
	if err := s.Query(`SELECT name, balance FROM accounts WHERE org = 'acme' AND id = 2`).Scan(&name, &balance); err != nil {
		t.Fatalf("racing write lost: %v", err)
	}
	if name != "racer" || balance != nil {
		t.Fatalf("after delete: name=%q balance=%v; want the racing name only", name, balance)
	}
	if rec.Values["name"] != "Bob" {
		t.Fatalf("tombstone holds %v, want what was deleted (Bob)", rec.Values["name"])
	}
}

// TestTombstoneConcurrentDeletes: two commands delete the same row at once; both are
// recorded and Undelete by the earlier one refuses.
func TestTombstoneConcurrentDeletes(t *testing.T) {
	var reads sync.WaitGroup
	reads.Add(2)
	s, tbl, st := tombstoneSetup(t, tombstone.WithHookAfterRead(func() { reads.Done(); reads.Wait() }))
	insertAccount(t, s, 3, "Cy")
	key := map[string]any{"org": "acme", "id": 3}
	var wg sync.WaitGroup
	recs := make([]tombstone.Record, 2)
	for i, cmd := range []string{"cmd-a", "cmd-b"} {
		wg.Add(1)
		go func(i int, cmd string) {
			defer wg.Done()
			r, err := st.Delete(context.Background(), tbl, key, cmd)
			if err != nil {
				t.Error(err)
			}
			recs[i] = r
		}(i, cmd)
	}
	wg.Wait()
	hist, err := st.List(context.Background(), tbl, key)
	if err != nil || len(hist) != 2 {
		t.Fatalf("history %d records, %v; want both deletes", len(hist), err)
	}
	earlier := hist[1].CommandID
	if _, err := st.Undelete(context.Background(), tbl, key, earlier); !errors.Is(err, tombstone.ErrNotLastDelete) {
		t.Fatalf("Undelete by the earlier command: %v, want ErrNotLastDelete", err)
	}
	if _, err := st.Undelete(context.Background(), tbl, key, hist[0].CommandID); err != nil {
		t.Fatalf("Undelete by the latest command: %v", err)
	}
}

// TestTombstoneRecreatedAndReconcile: Undelete refuses after the row was recreated;
// Reconcile reports that untidy state and cleans it up when asked.
func TestTombstoneRecreatedAndReconcile(t *testing.T) {
	s, tbl, st := tombstoneSetup(t)
	ctx := context.Background()
	insertAccount(t, s, 4, "Di")
	key := map[string]any{"org": "acme", "id": 4}
	if _, err := st.Delete(ctx, tbl, key, "cmd-x"); err != nil {
		t.Fatal(err)
	}
	insertAccount(t, s, 4, "Di again")
	plan, _ := st.Plan(ctx, tbl, key, "cmd-x")
	if plan.Allowed || plan.Current["name"] != "Di again" || plan.Restore["name"] != "Di" {
		t.Fatalf("plan %+v", plan)
	}
	if _, err := st.Undelete(ctx, tbl, key, "cmd-x"); !errors.Is(err, tombstone.ErrRowExists) {
		t.Fatalf("Undelete after recreate: %v, want ErrRowExists", err)
	}
	if r, _ := readAccount(t, s, 4); r.Name != "Di again" {
		t.Fatalf("recreated row clobbered: %+v", r)
	}
	rep, err := st.Reconcile(ctx, tbl, false)
	if err != nil || len(rep.Untidy) != 1 || rep.Cleaned != 0 {
		t.Fatalf("reconcile report %+v %v", rep, err)
	}
	rep, err = st.Reconcile(ctx, tbl, true)
	if err != nil || rep.Cleaned != 1 {
		t.Fatalf("reconcile fix %+v %v", rep, err)
	}
	if recs, _ := st.List(ctx, tbl, key); len(recs) != 0 {
		t.Fatalf("tombstones left after clean-up: %d", len(recs))
	}
}

// TestTombstoneTTL: tombstones expire with their TTL.
func TestTombstoneTTL(t *testing.T) {
	s, tbl, st := tombstoneSetup(t, tombstone.WithTTL(2*time.Second))
	insertAccount(t, s, 5, "Ed")
	key := map[string]any{"org": "acme", "id": 5}
	if _, err := st.Delete(context.Background(), tbl, key, "cmd"); err != nil {
		t.Fatal(err)
	}
	if recs, _ := st.List(context.Background(), tbl, key); len(recs) != 1 {
		t.Fatalf("%d records before expiry", len(recs))
	}
	time.Sleep(3 * time.Second)
	if recs, _ := st.List(context.Background(), tbl, key); len(recs) != 0 {
		t.Fatalf("%d records after the TTL", len(recs))
	}
}

// TestTombstoneBadInput: typed errors, nothing written.
func TestTombstoneBadInput(t *testing.T) {
	s, tbl, st := tombstoneSetup(t)
	ctx := context.Background()
	insertAccount(t, s, 6, "Fay")
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"missing clustering key", func() error { _, err := st.Delete(ctx, tbl, map[string]any{"org": "acme"}, "c"); return err }(), overwrite.ErrMissingKey},
		{"empty command", func() error { _, err := st.Delete(ctx, tbl, map[string]any{"org": "acme", "id": 6}, ""); return err }(), tombstone.ErrEmptyCommand},
		{"row does not exist", func() error { _, err := st.Delete(ctx, tbl, map[string]any{"org": "acme", "id": 99}, "c"); return err }(), tombstone.ErrNoRow},
		{"nothing to undo", func() error { _, err := st.Undelete(ctx, tbl, map[string]any{"org": "acme", "id": 6}, "c"); return err }(), tombstone.ErrNoTombstone},
		{"tombstone table missing", func() error { _, err := tombstone.New(ctx, s, tbl.Keyspace, "nope"); return err }(), tombstone.ErrNoTombstoneTable},
		{"unknown table", func() error { _, err := overwrite.Describe(ctx, s, tbl.Keyspace, "nope"); return err }(), overwrite.ErrUnknownTable},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if r, ok := readAccount(t, s, 6); !ok || r.Name != "Fay" {
		t.Fatal("rejected input changed the row")
	}
	var n int
	if err := s.Query(`SELECT COUNT(*) FROM tombstones`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("tombstones written by rejected input: %d %v", n, err)
	}
}
