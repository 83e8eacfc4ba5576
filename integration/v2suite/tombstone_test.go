package v2suite

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	v1 "github.com/gocql/gocql"

	tablev2 "github.com/cqlsafe/cqlsafe/gocqlv2/table"
	"github.com/cqlsafe/cqlsafe/gocqlv2/tombstone"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/schema"
	tablev1 "github.com/cqlsafe/cqlsafe/table"
	tombstonev1 "github.com/cqlsafe/cqlsafe/tombstone"
)

// selectJSON reads a row as Cassandra's JSON with the harness's own session ("" for no
// row).
func selectJSON(t *testing.T, s *v1.Session, q string) string {
	t.Helper()
	var js string
	if err := s.Query(q).Consistency(v1.All).Scan(&js); err != nil && !errors.Is(err, v1.ErrNotFound) {
		t.Fatal(err)
	}
	return js
}

// TestV2TombstoneEveryTypeBothDrivers: gocqlv2/tombstone deletes and undeletes a row of
// every kind of column — a tuple in the key, a non-frozen and a frozen UDT, a vector, a
// tuple, empty blobs (alone and in a frozen list), a non-frozen set, map and list, cells
// with their own TTLs on a table with a default TTL — and the row comes back as it was
// (SELECT JSON), each restored cell with the TTL it had left (a cell without one gets
// none). The record format is one for both drivers: a row deleted through gocql v1.7's
// Store is planned and undone through v2's, and v1's List reads the undelete v2
// recorded. Reconcile through v2 finds a row recreated after its delete and cleans its
// records.
func TestV2TombstoneEveryTypeBothDrivers(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TYPE ua (a int, b blob)`,
		`CREATE TABLE odd (k int, c frozen<tuple<int, text>>, u ua, fu frozen<ua>, v vector<float, 3>, tp tuple<int, blob>,
			b blob, lb frozen<list<blob>>, st set<text>, m map<text, int>, l list<int>, n int, PRIMARY KEY (k, c))
			WITH default_time_to_live = 86400`)
	if err := schema.ApplyTemplate(ctx, s0, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	s, _ := proxied(t, ks, 5*time.Second)
	st, err := tombstone.New(ctx, s, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	st1, err := tombstonev1.New(ctx, s0, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := tablev2.Describe(ctx, s, ks, "odd")
	if err != nil {
		t.Fatal(err)
	}
	tbl1, err := tablev1.Describe(ctx, s0, ks, "odd")
	if err != nil {
		t.Fatal(err)
	}
	insert := func(k int) {
		harness.Exec(t, s0,
			`INSERT INTO odd (k, c, u, fu, v, tp, b, lb, st, m, l, n) VALUES (`+strconv.Itoa(k)+`, (2, 'x'), {a: 1, b: 0x}, {a: 2, b: 0xff},
				[1.5, 2.5, 3.5], (3, 0x), 0x, [0x, 0x01], {'p', 'q'}, {'a': 1}, [7, 8], 5) USING TTL 3600`,
			`UPDATE odd USING TTL 0 SET n = 6 WHERE k = `+strconv.Itoa(k)+` AND c = (2, 'x')`)
	}
	where := func(k int) string { return `SELECT JSON * FROM odd WHERE k = ` + strconv.Itoa(k) + ` AND c = (2, 'x')` }
	ttls := func(k int) (n, b *int) {
		if err := s0.Query(`SELECT TTL(n), TTL(b) FROM odd WHERE k = ? AND c = (2, 'x')`, k).Scan(&n, &b); err != nil {
			t.Fatal(err)
		}
		return n, b
	}

	// Row 1 through v2 alone.
	insert(1)
	before := selectJSON(t, s0, where(1))
	key := map[string]any{"k": 1, "c": []any{2, "x"}}
	rec, err := st.Delete(ctx, tbl, key, "cmd-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := selectJSON(t, s0, where(1)); got != "" {
		t.Fatalf("row 1 after Delete: %s", got)
	}
	if rec.Values["n"] != 6 || len(rec.Expires) == 0 || rec.Timestamp == 0 {
		t.Fatalf("record %+v", rec)
	}
	if _, ok := rec.Expires["n"]; ok {
		t.Fatalf("n had no TTL, the record says it expires at %v", rec.Expires["n"])
	}
	plan, err := st.Plan(ctx, tbl, key, "cmd-1")
	if err != nil || !plan.Allowed || plan.Current != nil || plan.RestoreTTL["b"] < 3500*time.Second {
		t.Fatalf("plan %+v %v", plan, err)
	}
	time.Sleep(1100 * time.Millisecond) // the remaining TTL must shrink, not restart
	if _, err := st.Undelete(ctx, tbl, key, "cmd-1"); err != nil {
		t.Fatal(err)
	}
	if after := selectJSON(t, s0, where(1)); after != before {
		t.Fatalf("restored\n%s\nwant\n%s", after, before)
	}
	if n, b := ttls(1); n != nil || b == nil || *b < 3500 || *b > 3599 {
		t.Fatalf("restored TTLs: n %v, b %v; want none (not the table's default) and ≈3598", n, b)
	}
	if _, err := st.Undelete(ctx, tbl, key, "cmd-1"); !errors.Is(err, tombstone.ErrNoTombstone) {
		t.Fatalf("second Undelete: %v, want ErrNoTombstone", err)
	}

	// Row 2: deleted through gocql v1.7, undone through v2, the history read through v1.
	insert(2)
	before = selectJSON(t, s0, where(2))
	key2 := map[string]any{"k": 2, "c": []any{2, "x"}}
	if _, err := st1.Delete(ctx, tbl1, key2, "cmd-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Undelete(ctx, tbl, key2, "cmd-1"); !errors.Is(err, tombstone.ErrNotLastDelete) {
		t.Fatalf("Undelete by another command: %v, want ErrNotLastDelete", err)
	}
	if _, err := st.Undelete(ctx, tbl, key2, "cmd-2"); err != nil {
		t.Fatal(err)
	}
	if after := selectJSON(t, s0, where(2)); after != before {
		t.Fatalf("row 2 restored through v2\n%s\nwant\n%s", after, before)
	}
	recs, err := st1.List(ctx, tbl1, key2)
	if err != nil || len(recs) != 2 || recs[0].Action != tombstonev1.ActionUndelete || recs[1].Action != tombstonev1.ActionDelete {
		t.Fatalf("v1 List of row 2: %+v %v", recs, err)
	}

	// Row 3: deleted through v2, recreated by hand; Reconcile through v2 cleans it up.
	insert(3)
	key3 := map[string]any{"k": 3, "c": []any{2, "x"}}
	if _, err := st.Delete(ctx, tbl, key3, "cmd-3"); err != nil {
		t.Fatal(err)
	}
	insert(3)
	rep, err := st.Reconcile(ctx, tbl, true)
	if err != nil || len(rep.Untidy) != 1 || rep.Cleaned != 1 || rep.Rows != 3 {
		t.Fatalf("Reconcile: %+v %v; want row 3 untidy and cleaned among 3 rows", rep, err)
	}
	if recs, err := st.List(ctx, tbl, key3); err != nil || len(recs) != 0 {
		t.Fatalf("row 3's records after Reconcile: %+v %v", recs, err)
	}
}

// TestV2TombstoneUndeleteDroppedResponse: the restore's response is dropped (the v2
// session's own retry policy would retry it three times): the LWT is sent once, the
// SERIAL read settles it as restored, the non-frozen list holds [3 4] — not appended
// twice — and the undelete is recorded.
func TestV2TombstoneUndeleteDroppedResponse(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TABLE acc (id int PRIMARY KEY, name text, scores list<int>)`,
		`INSERT INTO acc (id, name, scores) VALUES (8, 'Ivy', [3, 4])`)
	if err := schema.ApplyTemplate(ctx, s0, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	s, px := proxiedWith(t, ks, time.Second, func(cl *gocql.ClusterConfig) { cl.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3} })
	st, err := tombstone.New(ctx, s, ks, "tombstones", tombstone.WithSettleDelay(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := tablev2.Describe(ctx, s, ks, "acc")
	if err != nil {
		t.Fatal(err)
	}
	key := map[string]any{"id": 8}
	if _, err := st.Delete(ctx, tbl, key, "cmd-bug"); err != nil {
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
	if _, err := st.Undelete(ctx, tbl, key, "cmd-bug"); err != nil {
		t.Fatalf("Undelete after a dropped response: %v (LWT sent %d times)", err, sends.Load())
	}
	if px.Stats().Dropped.Load() != 1 || sends.Load() != 1 {
		t.Fatalf("%d responses dropped, LWT sent %d times; want 1 and 1", px.Stats().Dropped.Load(), sends.Load())
	}
	var name string
	var scores []int
	if err := s0.Query(`SELECT name, scores FROM acc WHERE id = 8`).Consistency(v1.All).Scan(&name, &scores); err != nil ||
		name != "Ivy" || !slices.Equal(scores, []int{3, 4}) {
		t.Fatalf("row after undelete: %q %v %v; want Ivy [3 4]", name, scores, err)
	}
	recs, err := st.List(ctx, tbl, key)
	if err != nil || len(recs) != 2 || recs[0].Action != tombstone.ActionUndelete {
		t.Fatalf("history %+v %v; want the undelete recorded", recs, err)
	}
}
