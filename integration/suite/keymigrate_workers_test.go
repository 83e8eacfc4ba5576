package suite

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/keymigrate"
)

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
