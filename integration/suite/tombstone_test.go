package suite

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/cqlsafe/cqlsafe/table"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

// before50 reports whether the node runs Cassandra before 5.0: no vector type, and no
// WRITETIME or TTL of a non-frozen collection or UDT, so tombstone and keymigrate's
// Backfill refuse tables with those (table.ErrUnsupported).
func before50() bool {
	major, err := strconv.Atoi(strings.SplitN(node.Version(), ".", 2)[0])
	return err == nil && major < 5
}

// tagsType is the accounts table's tags column: a non-frozen set, or before 5.0, where
// a table with one is refused (TestTombstoneUnsupportedBefore50), a frozen one, so the
// rest of the suite runs there too.
func tagsType() string {
	if before50() {
		return "frozen<set<text>>"
	}
	return "set<text>"
}

func tombstoneSetup(t testing.TB, opts ...tombstone.Option) (*gocql.Session, *overwrite.Table, *tombstone.Store) {
	t.Helper()
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE accounts (org text, id int, name text, balance bigint, active boolean, avatar blob,
		tags `+tagsType()+`, history frozen<list<int>>, opened timestamp, ref uuid, PRIMARY KEY (org, id))`)
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
	//cqlsafe:ignore list-assignment history is frozen<list<int>>
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

// TestTombstoneDeleteRacingWriteTimestamps pins Delete's exact guarantee: it deletes the
// row at T, the newest WRITETIME it read, so a write that lands between the read and the
// delete survives iff its timestamp is above T. Ties go to the delete (a tombstone wins
// over a cell with the same timestamp), and so does a lagging writer whose timestamp is
// above its own column's cell but not above T; neither is in the tombstone record.
func TestTombstoneDeleteRacingWriteTimestamps(t *testing.T) {
	var s *gocql.Session
	var racer func()
	s, tbl, st := tombstoneSetup(t, tombstone.WithHookAfterRead(func() { racer() }))
	ctx := context.Background()
	t0 := time.Now().UnixMicro() - 60_000_000
	newest := t0 + 10
	for i, tc := range []struct {
		name     string
		ts       int64 // the racing write's timestamp
		survives bool
	}{
		{"older than its column's cell", t0 - 1, false},
		{"newer than its column, older than the newest cell", t0 + 5, false},
		{"equal to the newest cell", newest, false},
		{"newer than the newest cell", newest + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := 100 + i
			if err := s.Query(`INSERT INTO accounts (org, id, name, balance, active) VALUES ('acme', ?, 'Gil', 1, true) USING TIMESTAMP ?`, id, t0).Exec(); err != nil {
				t.Fatal(err)
			}
			if err := s.Query(`UPDATE accounts USING TIMESTAMP ? SET balance = 2 WHERE org = 'acme' AND id = ?`, newest, id).Exec(); err != nil {
				t.Fatal(err)
			}
			racer = func() {
				if err := s.Query(`UPDATE accounts USING TIMESTAMP ? SET name = 'racer' WHERE org = 'acme' AND id = ?`, tc.ts, id).Exec(); err != nil {
					panic(err)
				}
			}
			rec, err := st.Delete(ctx, tbl, map[string]any{"org": "acme", "id": id}, "cmd")
			if err != nil {
				t.Fatal(err)
			}
			if rec.Timestamp != newest || rec.Values["name"] != "Gil" || rec.WriteTimes["name"] != t0 {
				t.Fatalf("record: timestamp %d (want %d), name %v at %d", rec.Timestamp, newest, rec.Values["name"], rec.WriteTimes["name"])
			}
			var name string
			var wt int64
			var balance *int64
			err = s.Query(`SELECT name, WRITETIME(name), balance FROM accounts WHERE org = 'acme' AND id = ?`, id).Scan(&name, &wt, &balance)
			switch {
			case tc.survives && (err != nil || name != "racer" || wt != tc.ts || balance != nil):
				t.Fatalf("racing write at %d: name=%q at %d, balance=%v, %v; want only the racing name", tc.ts, name, wt, balance, err)
			case !tc.survives && !errors.Is(err, gocql.ErrNotFound):
				t.Fatalf("racing write at %d (T=%d) survived: name=%q at %d, %v", tc.ts, newest, name, wt, err)
			}
		})
	}
}

// TestTombstoneReconcileKeepsLaterDelete: Reconcile(fix) removes exactly the records it
// read. A Delete recorded after the clean-up by a client whose clock is behind stays
// recorded and can be undone (a partition delete at "now" used to shadow it).
func TestTombstoneReconcileKeepsLaterDelete(t *testing.T) {
	s, tbl, st := tombstoneSetup(t)
	ctx := context.Background()
	insertAccount(t, s, 7, "Hal")
	key := map[string]any{"org": "acme", "id": 7}
	if _, err := st.Delete(ctx, tbl, key, "cmd-x"); err != nil {
		t.Fatal(err)
	}
	insertAccount(t, s, 7, "Hal again")
	rep, err := st.Reconcile(ctx, tbl, true)
	if err != nil || rep.Cleaned != 1 {
		t.Fatalf("reconcile fix %+v %v", rep, err)
	}
	if recs, _ := st.List(ctx, tbl, key); len(recs) != 0 {
		t.Fatalf("%d records left after the clean-up", len(recs))
	}
	lagging, err := tombstone.New(ctx, s, tbl.Keyspace, "tombstones",
		tombstone.WithRetryPolicy(retry.NewPolicy(retry.WithClock(clientid.NewClockFunc(func() time.Time { return time.Now().Add(-time.Minute) })))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lagging.Delete(ctx, tbl, key, "cmd-y"); err != nil {
		t.Fatal(err)
	}
	recs, err := st.List(ctx, tbl, key)
	if err != nil || len(recs) != 1 || recs[0].CommandID != "cmd-y" {
		t.Fatalf("records after a later delete: %+v %v; want cmd-y's", recs, err)
	}
	if _, err := st.Undelete(ctx, tbl, key, "cmd-y"); err != nil {
		t.Fatal(err)
	}
	if r, ok := readAccount(t, s, 7); !ok || r.Name != "Hal again" {
		t.Fatalf("row after undelete: %+v %v", r, ok)
	}
}

// describeWithColumn describes table once the session's schema metadata, refreshed
// asynchronously after an ALTER, has column col.
func describeWithColumn(t testing.TB, s *gocql.Session, ks, table, col string) *overwrite.Table {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		tbl := describe(t, s, ks, table)
		if _, ok := tbl.Column(col); ok {
			return tbl
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s.%s: column %s not in the session's metadata after 10 s", ks, table, col)
		}
	}
}

// sameHostRetry retries anything, on the same host (the proxied session has one): what a
// session-wide retry policy that ignores idempotence does to an LWT.
type sameHostRetry struct{ gocql.SimpleRetryPolicy }

func (sameHostRetry) GetRetryType(error) gocql.RetryType { return gocql.Retry }

// TestTombstoneUndeleteDroppedResponse: the restore applied but its response was lost,
// on a session whose retry policy would re-send it. Undelete must not re-send the LWT
// (a re-send sees its own row and says ErrRowExists); it settles the outcome with a
// SERIAL read and records the undelete.
func TestTombstoneUndeleteDroppedResponse(t *testing.T) {
	s, tbl, st := tombstoneSetup(t)
	ctx := context.Background()
	// A non-frozen list: a re-sent restore must not append it twice. Before 5.0, where a
	// table with one is refused, a frozen list: the LWT must still be sent once.
	scoresType := "list<int>"
	if before50() {
		scoresType = "frozen<list<int>>"
	}
	harness.Exec(t, s, `ALTER TABLE accounts ADD scores `+scoresType)
	tbl = describeWithColumn(t, s, tbl.Keyspace, "accounts", "scores")
	insertAccount(t, s, 8, "Ivy")
	harness.Exec(t, s, `UPDATE accounts SET scores = [3, 4] WHERE org = 'acme' AND id = 8`)
	key := map[string]any{"org": "acme", "id": 8}
	if _, err := st.Delete(ctx, tbl, key, "cmd-bug"); err != nil {
		t.Fatal(err)
	}
	px, err := faultproxy.Start(node.Hosts()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	cl, err := node.ClusterVia(px.Addr(), tbl.Keyspace)
	if err != nil {
		t.Fatal(err)
	}
	cl.Timeout = time.Second
	cl.RetryPolicy = &sameHostRetry{gocql.SimpleRetryPolicy{NumRetries: 3}}
	ps, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ps.Close)
	pst, err := tombstone.New(ctx, ps, tbl.Keyspace, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	isLWT := faultproxy.Writes("IF NOT EXISTS")
	drop := faultproxy.DropNext(1, isLWT)
	var sends atomic.Int64
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if isLWT(r) {
			sends.Add(1)
		}
		return drop(r)
	})
	if _, err := pst.Undelete(ctx, tbl, key, "cmd-bug"); err != nil {
		t.Fatalf("Undelete after a dropped response: %v (LWT sent %d times)", err, sends.Load())
	}
	if px.Stats().Dropped.Load() != 1 || sends.Load() != 1 {
		t.Fatalf("%d responses dropped, LWT sent %d times; want 1 and 1", px.Stats().Dropped.Load(), sends.Load())
	}
	if r, ok := readAccount(t, s, 8); !ok || r.Name != "Ivy" || len(r.Tags) != 2 {
		t.Fatalf("row after undelete: %+v %v", r, ok)
	}
	var scores []int
	if err := s.Query(`SELECT scores FROM accounts WHERE org = 'acme' AND id = 8`).Scan(&scores); err != nil || !slices.Equal(scores, []int{3, 4}) {
		t.Fatalf("scores after undelete: %v %v; want [3 4]", scores, err)
	}
	recs, _ := st.List(ctx, tbl, key)
	if len(recs) != 2 || recs[0].Action != tombstone.ActionUndelete {
		t.Fatalf("history %+v; want the undelete recorded", recs)
	}
}

// TestTombstoneUndeleteShadowedByFutureDelete: a row whose newest cell is future-dated is
// deleted at that future timestamp. The restore's LWT says applied (it is stamped with
// the Paxos ballot, now), yet the row stays invisible: Undelete must say so and record
// nothing.
func TestTombstoneUndeleteShadowedByFutureDelete(t *testing.T) {
	s, tbl, st := tombstoneSetup(t)
	ctx := context.Background()
	future := time.Now().Add(time.Hour).UnixMicro()
	if err := s.Query(`INSERT INTO accounts (org, id, name, balance) VALUES ('acme', 9, 'Jo', 5) USING TIMESTAMP ?`, future).Exec(); err != nil {
		t.Fatal(err)
	}
	key := map[string]any{"org": "acme", "id": 9}
	if _, err := st.Delete(ctx, tbl, key, "cmd-f"); err != nil {
		t.Fatal(err)
	}
	_, err := st.Undelete(ctx, tbl, key, "cmd-f")
	var rerr *tombstone.RestoreError
	if !errors.Is(err, tombstone.ErrRestoreShadowed) || !errors.As(err, &rerr) {
		t.Fatalf("Undelete under a future-dated delete: %v, want ErrRestoreShadowed", err)
	}
	if _, ok := readAccount(t, s, 9); ok {
		t.Fatal("row visible: the test's premise (a shadowing future delete) is wrong")
	}
	if recs, _ := st.List(ctx, tbl, key); len(recs) != 1 || recs[0].Action != tombstone.ActionDelete {
		t.Fatalf("history %+v; want no undelete recorded", recs)
	}
}

// TestTombstoneUndeleteKeepsTTL: restored cells keep their remaining TTL, each its own;
// a cell without TTL gets none, even on a table with a default TTL.
func TestTombstoneUndeleteKeepsTTL(t *testing.T) {
	s, tbl, st := tombstoneSetup(t)
	ctx := context.Background()
	harness.Exec(t, s, `ALTER TABLE accounts WITH default_time_to_live = 86400`,
		`INSERT INTO accounts (org, id, name, balance, tags) VALUES ('acme', 10, 'Kim', 7, {'x'}) USING TTL 3600`,
		`UPDATE accounts USING TTL 7200 SET name = 'Kim' WHERE org = 'acme' AND id = 10`,
		`UPDATE accounts USING TTL 0 SET active = true WHERE org = 'acme' AND id = 10`)
	tbl = describe(t, s, tbl.Keyspace, "accounts")
	key := map[string]any{"org": "acme", "id": 10}
	if _, err := st.Delete(ctx, tbl, key, "cmd-t"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the remaining TTL must shrink, not restart
	if _, err := st.Undelete(ctx, tbl, key, "cmd-t"); err != nil {
		t.Fatal(err)
	}
	var name string
	var ttlName, ttlBalance, ttlActive *int
	var ttlTags []int
	var tagsTTL any = &ttlTags // a non-frozen set: one TTL per element
	var frozenTTL *int
	if before50() {
		tagsTTL = &frozenTTL // frozen<set<text>> (see tagsType): one cell
	}
	if err := s.Query(`SELECT name, TTL(name), TTL(balance), TTL(active), TTL(tags) FROM accounts WHERE org = 'acme' AND id = 10`).
		Scan(&name, &ttlName, &ttlBalance, &ttlActive, tagsTTL); err != nil {
		t.Fatal(err)
	}
	if frozenTTL != nil {
		ttlTags = []int{*frozenTTL}
	}
	in := func(p *int, lo, hi int) bool { return p != nil && *p >= lo && *p <= hi }
	if name != "Kim" || !in(ttlName, 7150, 7199) || !in(ttlBalance, 3550, 3599) || ttlActive != nil ||
		len(ttlTags) != 1 || ttlTags[0] < 3550 || ttlTags[0] > 3599 {
		deref := func(p *int) any {
			if p == nil {
				return nil
			}
			return *p
		}
		t.Fatalf("restored TTLs: name %v, balance %v, active %v, tags %v; want ≈7199, ≈3599, none, [≈3599]",
			deref(ttlName), deref(ttlBalance), deref(ttlActive), ttlTags)
	}
}

// TestTombstoneUDTVectorTupleEmptyBlob: Delete and Undelete of rows with UDT (frozen
// and not), vector, tuple (in the key too) and empty-blob cells: the row comes back as
// it was, cell by cell (SELECT JSON). Before: "no Go type for custom()" for the UDT
// and vector, gocql's tuple arity error, and for an empty blob Cassandra's "Null value
// read when not allowed" (the blob was recorded as NULL in the record's map).
func TestTombstoneUDTVectorTupleEmptyBlob(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	// Before 5.0 there is no vector type, and a non-frozen UDT is refused
	// (TestTombstoneUnsupportedBefore50): u is frozen and v left out there.
	uType, vCol, vVal := "ua", "v vector<float, 3>,", "[1.5, 2.5, 3.5],"
	if before50() {
		uType, vCol, vVal = "frozen<ua>", "", ""
	}
	harness.Exec(t, s, `CREATE TYPE ua (a int, b blob)`,
		`CREATE TABLE odd (k int, c frozen<tuple<int, text>>, u `+uType+`, fu frozen<ua>, `+vCol+` tp tuple<int, blob>,
			b blob, lb frozen<list<blob>>, PRIMARY KEY (k, c))`,
		`CREATE TABLE plainblob (k int PRIMARY KEY, b blob, n int)`)
	oddCols := "k, c, u, fu, v, tp, b, lb"
	if vCol == "" {
		oddCols = "k, c, u, fu, tp, b, lb"
	}
	if err := schema.ApplyTemplate(ctx, s, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	st, err := tombstone.New(ctx, s, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table, insert string
		key           map[string]any
	}{
		{"plainblob", `INSERT INTO plainblob (k, b, n) VALUES (1, 0x, 2)`, map[string]any{"k": 1}},
		{"odd", `INSERT INTO odd (` + oddCols + `) VALUES (1, (2, 'x'), {a: 1, b: 0x}, {a: 2, b: 0xff},
			` + vVal + ` (3, 0x), 0x, [0x, 0x01])`, map[string]any{"k": 1, "c": []any{2, "x"}}},
	} {
		harness.Exec(t, s, tc.insert)
		tbl := describe(t, s, ks, tc.table)
		where := " WHERE k = 1"
		if tc.table == "odd" {
			where += " AND c = (2, 'x')"
		}
		var before, after string
		if err := s.Query(`SELECT JSON * FROM ` + tc.table + where).Scan(&before); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Delete(ctx, tbl, tc.key, "cmd"); err != nil {
			t.Fatalf("%s: Delete: %v", tc.table, err)
		}
		if err := s.Query(`SELECT JSON * FROM ` + tc.table + where).Scan(&after); !errors.Is(err, gocql.ErrNotFound) {
			t.Fatalf("%s: after Delete: %s %v", tc.table, after, err)
		}
		if _, err := st.Undelete(ctx, tbl, tc.key, "cmd"); err != nil {
			t.Fatalf("%s: Undelete: %v", tc.table, err)
		}
		if err := s.Query(`SELECT JSON * FROM ` + tc.table + where).Scan(&after); err != nil || after != before {
			t.Fatalf("%s: restored\n%s\nwant\n%s (%v)", tc.table, after, before, err)
		}
	}
}

// TestTombstoneUnsupportedBefore50: before Cassandra 5.0, which cannot read the write
// times and TTLs of a non-frozen collection's or UDT's cells, Delete, Plan, Undelete
// and Reconcile of a table with one return a *table.UnsupportedError naming the column
// and the node's version, before sending anything: no query reaches the node, the row
// keeps its values and write time, no tombstone is recorded. Before: the server's
// untyped "Unknown function 'maxwritetime'", after Delete had already read. On 5.0 and
// later every other tombstone test covers these tables.
func TestTombstoneUnsupportedBefore50(t *testing.T) {
	if !before50() {
		t.Skipf("Cassandra %s reads write times of non-frozen collections: nothing is refused", node.Version())
	}
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TYPE ua (a int, b text)`,
		`CREATE TABLE withset (k int PRIMARY KEY, n int, tags set<text>)`,
		`CREATE TABLE withudt (k int PRIMARY KEY, n int, u ua)`,
		`INSERT INTO withset (k, n, tags) VALUES (1, 2, {'a'}) USING TIMESTAMP 1000`,
		`INSERT INTO withudt (k, n, u) VALUES (1, 2, {a: 1, b: 'x'}) USING TIMESTAMP 1000`)
	if err := schema.ApplyTemplate(ctx, s, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	// A session that counts what is sent once the tables are described.
	obs := &countingObserver{}
	cl := node.Cluster(ks)
	cl.QueryObserver, cl.BatchObserver = obs, obs
	counted, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer counted.Close()
	st, err := tombstone.New(ctx, counted, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	key := map[string]any{"k": 1}
	for tblName, col := range map[string]string{"withset": "tags", "withudt": "u"} {
		tbl := describe(t, counted, ks, tblName)
		if tbl.CassandraVersion() != node.Version() {
			t.Fatalf("Describe read version %q, node runs %q", tbl.CassandraVersion(), node.Version())
		}
		obs.queries.Store(0)
		obs.batches.Store(0)
		for op, call := range map[string]func() error{
			"Delete":    func() error { _, err := st.Delete(ctx, tbl, key, "cmd"); return err },
			"Plan":      func() error { _, err := st.Plan(ctx, tbl, key, "cmd"); return err },
			"Undelete":  func() error { _, err := st.Undelete(ctx, tbl, key, "cmd"); return err },
			"Reconcile": func() error { _, err := st.Reconcile(ctx, tbl, true); return err },
		} {
			err := call()
			var ue *table.UnsupportedError
			if !errors.Is(err, table.ErrUnsupported) || !errors.As(err, &ue) || ue.Column != col || ue.Version != node.Version() || ue.Needs != "5.0" {
				t.Fatalf("%s %s: %v, want a table.UnsupportedError for column %s on %s", tblName, op, err, col, node.Version())
			}
		}
		if q, b := obs.queries.Load(), obs.batches.Load(); q != 0 || b != 0 {
			t.Fatalf("%s: %d queries and %d batches sent before the refusal", tblName, q, b)
		}
		var n, wt int64
		if err := s.Query(`SELECT n, WRITETIME(n) FROM `+tblName+` WHERE k = 1`).Scan(&n, &wt); err != nil || n != 2 || wt != 1000 {
			t.Fatalf("%s after the refusals: n=%d WRITETIME=%d (%v); want 2 at 1000", tblName, n, wt, err)
		}
	}
	var recs int
	if err := s.Query(`SELECT COUNT(*) FROM tombstones`).Scan(&recs); err != nil || recs != 0 {
		t.Fatalf("tombstones recorded: %d %v", recs, err)
	}
	// A table of scalars and frozen collections is not refused on the same node.
	harness.Exec(t, s, `CREATE TABLE frozenset (k int PRIMARY KEY, n int, tags frozen<set<text>>, u frozen<ua>)`,
		`INSERT INTO frozenset (k, n, tags, u) VALUES (1, 2, {'a'}, {a: 1, b: 'x'}) USING TIMESTAMP 1000`)
	rec, err := st.Delete(ctx, describe(t, s, ks, "frozenset"), key, "cmd")
	if err != nil || rec.Timestamp != 1000 || rec.WriteTimes["tags"] != 1000 || rec.WriteTimes["u"] != 1000 {
		t.Fatalf("frozen columns on %s: %+v %v", node.Version(), rec, err)
	}
}

// TestTombstoneLaggingClockRecreateVisible: an instance whose clock lags 2 s behind the
// instance that last wrote a row deletes it (at that row's newest WRITETIME, T) and
// then writes it again with overwrite.Row. Without the clock's observe rule its write
// would be stamped below T and shadowed by its own delete: acknowledged, yet invisible.
// The delete's read advances the Policy's clock past T, so the new row is there —
// whether T is a scalar's WRITETIME, a non-frozen set's MAXWRITETIME (5.0+) or a frozen
// list's.
func TestTombstoneLaggingClockRecreateVisible(t *testing.T) {
	lag := 2 * time.Second
	clock := clientid.NewClockFunc(func() time.Time { return time.Now().Add(-lag) })
	p := retry.NewPolicy(retry.WithClock(clock))
	s, tbl, st := tombstoneSetup(t, tombstone.WithRetryPolicy(p))
	ctx := context.Background()
	for id, ahead := range map[int]string{
		7: `UPDATE accounts SET name = 'Ann' WHERE org = 'acme' AND id = 7`,
		8: `UPDATE accounts SET tags = {'x'} WHERE org = 'acme' AND id = 8`,
		9: `UPDATE accounts SET history = [1, 2] WHERE org = 'acme' AND id = 9`, //cqlsafe:ignore list-assignment history is frozen<list<int>>
	} {
		// An older write by this instance, then the newest by one whose clock is right:
		// stamped now, 2 s above ours.
		if err := p.Exec(ctx, s.Query(`UPDATE accounts SET balance = 1 WHERE org = 'acme' AND id = ?`, id)); err != nil {
			t.Fatal(err)
		}
		ts := time.Now().UnixMicro()
		if err := retry.NewPolicy().Exec(ctx, s.Query(ahead), retry.AtTimestamp(ts)); err != nil {
			t.Fatal(err)
		}
		rec, err := st.Delete(ctx, tbl, map[string]any{"org": "acme", "id": id}, "cmd-lag")
		if err != nil {
			t.Fatal(err)
		}
		if rec.Timestamp != ts {
			t.Fatalf("id %d: deleted at %d, want the row's newest write time %d", id, rec.Timestamp, ts)
		}
		res, err := overwrite.Row(ctx, s, tbl, map[string]any{"org": "acme", "id": id, "name": "again", "balance": int64(2)},
			overwrite.WithRetryPolicy(p))
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var wt int64
		err = s.Query(`SELECT name, WRITETIME(name) FROM accounts WHERE org = 'acme' AND id = ?`, id).Scan(&name, &wt)
		if err != nil {
			t.Fatalf("id %d: the row written after the delete is not visible (overwrite at %d, delete at %d): %v", id, res.Timestamp, rec.Timestamp, err)
		}
		if name != "again" || wt <= rec.Timestamp {
			t.Fatalf("id %d: name %q at %d; want the new row above the delete at %d", id, name, wt, rec.Timestamp)
		}
	}
}
