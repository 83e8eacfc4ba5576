package v2suite

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/gocqlv2/keymigrate"
	tablev2 "github.com/cqlsafe/cqlsafe/gocqlv2/table"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	keymigratev1 "github.com/cqlsafe/cqlsafe/keymigrate"
	tablev1 "github.com/cqlsafe/cqlsafe/table"
)

// bucketKey is the migrations' transform: the old key id, bucketed.
func bucketKey(old map[string]any) (map[string]any, error) {
	id, ok := old["id"].(int)
	if !ok {
		return nil, fmt.Errorf("id %T", old["id"])
	}
	return map[string]any{"bucket": id % 4, "id": id}, nil
}

// rowsAsJSON reads every row of a table as Cassandra's JSON of the columns sel, with
// the harness's own session, sorted.
func rowsAsJSON(t *testing.T, s *v1.Session, sel, table string) []string {
	t.Helper()
	iter := s.Query(`SELECT JSON ` + sel + ` FROM ` + table).Consistency(v1.All).Iter()
	var out []string
	var js string
	for iter.Scan(&js) {
		out = append(out, js)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestV2KeymigrateEveryType: gocqlv2/keymigrate backfills a table of every kind of
// column — a non-frozen and a frozen UDT, a vector, a tuple, an empty blob, a
// non-frozen list, set and map, cells with their own TTLs and cells without — into a
// new key format: every cell lands with its WRITETIME and its TTL (a cell without one
// takes the target's default TTL, as keymigrate documents), the lists once though the
// backfill runs twice; Verify finds the tables equal; a DualWrite carrying a list, and a
// DualDelete, reach both tables at one pinned timestamp.
func TestV2KeymigrateEveryType(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	cols := `u ua, fu frozen<ua>, v vector<float, 3>, tp tuple<int, blob>, b blob, l list<int>, st set<text>, m map<text, int>, n int`
	harness.Exec(t, s0, `CREATE TYPE ua (a int, b blob)`,
		`CREATE TABLE old (id int PRIMARY KEY, `+cols+`)`,
		`CREATE TABLE new (bucket int, id int, `+cols+`, PRIMARY KEY (bucket, id)) WITH default_time_to_live = 86400`)
	for id := range 20 {
		harness.Exec(t, s0, fmt.Sprintf(`INSERT INTO old (id, u, fu, v, tp, b, l, st, m) VALUES (%d, {a: 1, b: 0x}, {a: 2, b: 0xff},
			[1.5, 2.5, 3.5], (3, 0x), 0x, [7, 8], {'p', 'q'}, {'a': %d}) USING TTL 3600`, id, id),
			fmt.Sprintf(`UPDATE old USING TIMESTAMP 1000 SET n = %d WHERE id = %d`, id, id))
	}
	s, _ := proxied(t, ks, 5*time.Second)
	oldT, err := tablev2.Describe(ctx, s, ks, "old")
	if err != nil {
		t.Fatal(err)
	}
	newT, err := tablev2.Describe(ctx, s, ks, "new")
	if err != nil {
		t.Fatal(err)
	}
	m, err := keymigrate.New(s, "bucket", oldT, newT, bucketKey)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a re-run copies the same cells again: lists must not grow
		if p, err := m.Backfill(ctx, keymigrate.WithRanges(4)); err != nil || p.Rows != 20 {
			t.Fatalf("Backfill: %+v %v", p, err)
		}
	}
	sel := `id, u, fu, v, tp, b, l, st, m, n, WRITETIME(fu) AS wfu, WRITETIME(n) AS wn, WRITETIME(tp) AS wtp`
	if got, want := rowsAsJSON(t, s0, sel, "new"), rowsAsJSON(t, s0, sel, "old"); !slices.Equal(got, want) {
		t.Fatalf("copied rows differ:\n%v\nwant\n%v", got, want)
	}
	var ttl, ttlN *int
	if err := s0.Query(`SELECT TTL(b), TTL(n) FROM new WHERE bucket = 1 AND id = 5`).Scan(&ttl, &ttlN); err != nil ||
		ttl == nil || *ttl > 3600 || *ttl < 3500 || ttlN == nil || *ttlN < 86000 {
		t.Fatalf("TTLs of the copy: b %v, n %v (%v); want the source's ≈3600, and the target's default ≈86400 for n, which had none", ttl, ttlN, err)
	}
	if rep, err := m.Verify(ctx); err != nil || !rep.OK() || rep.Checked != 20 {
		t.Fatalf("Verify: %v %v", rep, err)
	}

	ts, err := m.DualWrite(ctx, map[string]any{"id": 30, "l": []int{1, 2}, "n": 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SELECT l, WRITETIME(n) FROM old WHERE id = 30`, `SELECT l, WRITETIME(n) FROM new WHERE bucket = 2 AND id = 30`} {
		var l []int
		var wn int64
		if err := s0.Query(q).Scan(&l, &wn); err != nil || !slices.Equal(l, []int{1, 2}) || wn != ts {
			t.Fatalf("%s: %v at %d (%v); want [1 2] at %d", q, l, wn, err, ts)
		}
	}
	if _, err := m.DualDelete(ctx, map[string]any{"id": 30}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s0, `SELECT COUNT(*) FROM old WHERE id = 30`) + countRows(t, s0, `SELECT COUNT(*) FROM new WHERE bucket = 2 AND id = 30`); n != 0 {
		t.Fatalf("%d rows left after DualDelete", n)
	}
}

func countRows(t *testing.T, s *v1.Session, q string) int {
	t.Helper()
	var n int
	if err := s.Query(q).Consistency(v1.All).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestV2KeymigrateWorkersBothDrivers: one backfill shared by a worker on the v2 driver,
// whose first claim's response is dropped (settled by a SERIAL read, the range copied at
// once, not after its own lease expires), and a worker on gocql v1.7 — one lease table,
// one format. Every row is copied, Status (read through either driver) says complete,
// and Verify finds the tables equal.
func TestV2KeymigrateWorkersBothDrivers(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, `CREATE TABLE old (id int PRIMARY KEY, name text, n int)`,
		`CREATE TABLE new (bucket int, id int, name text, n int, PRIMARY KEY (bucket, id))`)
	b := s0.NewBatch(v1.UnloggedBatch)
	for id := range 300 {
		b.Query(`INSERT INTO old (id, name, n) VALUES (?, ?, ?)`, id, fmt.Sprint("name", id), id)
		if b.Size() == 50 {
			if err := s0.ExecuteBatch(b); err != nil {
				t.Fatal(err)
			}
			b = s0.NewBatch(v1.UnloggedBatch)
		}
	}
	s, px := proxied(t, ks, 2*time.Second)
	oldT, err := tablev2.Describe(ctx, s, ks, "old")
	if err != nil {
		t.Fatal(err)
	}
	newT, err := tablev2.Describe(ctx, s, ks, "new")
	if err != nil {
		t.Fatal(err)
	}
	m2, err := keymigrate.New(s, "shared", oldT, newT, bucketKey)
	if err != nil {
		t.Fatal(err)
	}
	oldT1, err := tablev1.Describe(ctx, s0, ks, "old")
	if err != nil {
		t.Fatal(err)
	}
	newT1, err := tablev1.Describe(ctx, s0, ks, "new")
	if err != nil {
		t.Fatal(err)
	}
	m1, err := keymigratev1.New(s0, "shared", oldT1, newT1, bucketKey)
	if err != nil {
		t.Fatal(err)
	}
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("IF NOT EXISTS USING TTL")))
	var wg sync.WaitGroup
	var rep2 keymigrate.WorkerReport
	var rep1 keymigratev1.WorkerReport
	var err2, err1 error
	start := time.Now()
	wg.Add(2)
	go func() {
		defer wg.Done()
		rep2, err2 = m2.RunWorker(ctx, keymigrate.WorkerRanges(8), keymigrate.WorkerLeaseTTL(30*time.Second), keymigrate.WorkerID("v2"))
	}()
	go func() {
		defer wg.Done()
		time.Sleep(200 * time.Millisecond) // the v2 worker creates the lease table
		rep1, err1 = m1.RunWorker(ctx, keymigratev1.WorkerRanges(8), keymigratev1.WorkerLeaseTTL(30*time.Second), keymigratev1.WorkerID("v1"))
	}()
	wg.Wait()
	took := time.Since(start)
	if err2 != nil || err1 != nil || rep2.Ranges+rep1.Ranges != 8 || rep2.Ranges == 0 {
		t.Fatalf("workers: v2 %+v %v, v1 %+v %v; want 8 ranges between them, some on v2", rep2, err2, rep1, err1)
	}
	if px.Stats().Dropped.Load() != 1 {
		t.Fatalf("dropped %d responses, want the claim's", px.Stats().Dropped.Load())
	}
	if took > 25*time.Second {
		t.Fatalf("took %v: a worker waited for its own lease to expire instead of settling the claim", took)
	}
	st2, err := m2.Status(ctx, keymigrate.WorkerRanges(8))
	if err != nil || !st2.Complete() || st2.Rows != 300 {
		t.Fatalf("v2 Status: %v %v", st2, err)
	}
	if st1, err := m1.Status(ctx, keymigratev1.WorkerRanges(8)); err != nil || !st1.Complete() || st1.Rows != 300 {
		t.Fatalf("v1 Status: %v %v", st1, err)
	}
	if n := countRows(t, s0, `SELECT COUNT(*) FROM new`); n != 300 {
		t.Fatalf("%d rows copied, want 300", n)
	}
	if rep, err := m2.Verify(ctx); err != nil || !rep.OK() || rep.Checked != 300 {
		t.Fatalf("Verify: %v %v", rep, err)
	}
}
