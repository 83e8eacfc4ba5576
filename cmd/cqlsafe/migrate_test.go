package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/table"
)

// Tests of cqlsafe migrate: worker processes of the built binary sharing one backfill.
// CQLSAFE_MIGRATE_ROWS sets the table size (default 100,000; the full size is
// 1,000,000). CQLSAFE_MIGRATE_THROUGHPUT=1 runs the 1- vs 3-process throughput test.

func migrateRows(t *testing.T) int {
	if s := os.Getenv("CQLSAFE_MIGRATE_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			t.Fatalf("CQLSAFE_MIGRATE_ROWS=%q: want a number ≥ 1000", s)
		}
		return n
	}
	return 100_000
}

// commentTables creates comments_v1 (10-digit text keys) and the given new tables, and
// fills comments_v1 with n rows, 100 per post, in unlogged single-partition batches.
func commentTables(t *testing.T, s *gocql.Session, n int, newTables ...string) {
	t.Helper()
	harness.Exec(t, s, `CREATE TABLE comments_v1 (post_id text, comment_key text, author text, body text, PRIMARY KEY (post_id, comment_key))`)
	for _, nt := range newTables {
		harness.Exec(t, s, `CREATE TABLE `+nt+` (post_id text, comment_key text, author text, body text, PRIMARY KEY (post_id, comment_key))`)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for first := w * 100; first < n; first += 800 {
				b := s.NewBatch(gocql.UnloggedBatch)
				for i := first; i < min(first+100, n); i++ {
					b.Query(`INSERT INTO comments_v1 (post_id, comment_key, author, body) VALUES (?, ?, ?, ?)`,
						fmt.Sprint("post-", i/100), fmt.Sprintf("%010d", i), "author", "a comment body of some length")
				}
				if err := s.ExecuteBatch(b); err != nil {
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
	t.Logf("loaded %d rows in %v", n, time.Since(start).Round(time.Millisecond))
}

// worker is one cqlsafe migrate backfill process.
type workerProc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	code     int
}

func startWorker(t *testing.T, args ...string) *workerProc {
	t.Helper()
	w := &workerProc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		err := w.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			w.code = ee.ExitCode()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			w.cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

func (w *workerProc) id(i int) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%d", host, w.cmd.Process.Pid, i)
}

func statusOf(t *testing.T, s *gocql.Session, ks, newTable, id string) *keymigrate.Migration {
	t.Helper()
	ctx := context.Background()
	old, err := table.Describe(ctx, s, ks, "comments_v1")
	if err != nil {
		t.Fatal(err)
	}
	nw, err := table.Describe(ctx, s, ks, newTable)
	if err != nil {
		t.Fatal(err)
	}
	m, err := keymigrate.New(s, id, old, nw, func(map[string]any) (map[string]any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMigrateWorkersSurviveKill: three worker processes share one backfill; one is
// killed with SIGKILL mid-run, holding a lease; the other two take its range over once
// the lease expires and finish; Verify is clean. Reports rows copied more than once.
func TestMigrateWorkersSurviveKill(t *testing.T) {
	s, ks := node.Keyspace(t)
	n := migrateRows(t)
	commentTables(t, s, n, "comments_v2")
	base := []string{"migrate", "backfill", "--hosts", node.Hosts()[0], "--keyspace", ks, "--old", "comments_v1", "--new", "comments_v2",
		"--map", "comment_key=sortable(comment_key)"}
	out, _, code := cli(t, "", "migrate", "check", "--hosts", node.Hosts()[0], "--keyspace", ks, "--old", "comments_v1", "--new", "comments_v2",
		"--map", "comment_key=sortable(comment_key)")
	if code != 0 || !strings.Contains(out, "→ (post-") || !strings.Contains(out, "check: ok") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	ranges, ttl := 64, 6*time.Second
	flags := append(base, "--workers", "1", "--ranges", fmt.Sprint(ranges), "--lease-ttl", ttl.String(), "--resume",
		"--progress", "lines", "--progress-every", "5s")
	start := time.Now()
	procs := []*workerProc{startWorker(t, flags...), startWorker(t, flags...), startWorker(t, flags...)}
	victim := procs[0]
	m := statusOf(t, s, ks, "comments_v2", "comments_v1-to-comments_v2")
	ctx := context.Background()

	var (
		killedAt time.Time
		held     []int // ranges the victim held when killed
		taken    = map[int]time.Duration{}
		st       keymigrate.Status
	)
	deadline := time.Now().Add(20 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("not finished: %v", st)
		}
		var err error
		st, err = m.Status(ctx)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		// Kill it mid-range: once it holds a range whose renewal recorded rows copied
		// (or, failing that, past 60%).
		midRange := false
		for _, r := range st.Ranges {
			midRange = midRange || (r.State == "claimed" && r.Owner == victim.id(0) && r.Rows > 0)
		}
		if killedAt.IsZero() && st.Done >= ranges*3/10 && st.Owners[victim.id(0)] > 0 && (midRange || st.Done >= ranges*6/10) {
			for _, r := range st.Ranges {
				if r.State == "claimed" && r.Owner == victim.id(0) {
					held = append(held, r.Range)
				}
			}
			if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killedAt = time.Now()
			t.Logf("killed %s at %v (%d/%d ranges done), holding ranges %v", victim.id(0), killedAt.Sub(start).Round(time.Millisecond), st.Done, ranges, held)
		}
		if !killedAt.IsZero() {
			for _, r := range held {
				if _, ok := taken[r]; !ok && st.Ranges[r].Owner != victim.id(0) && st.Ranges[r].State != "free" {
					taken[r] = time.Since(killedAt)
				}
			}
		}
		if st.Complete() {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	elapsed := time.Since(start)
	if killedAt.IsZero() {
		t.Fatal("the victim was never killed: the backfill finished first")
	}
	for i, p := range procs[1:] {
		select {
		case <-p.done:
		case <-time.After(time.Minute):
			t.Fatalf("worker %d did not exit", i+1)
		}
		if p.code != 0 {
			t.Fatalf("worker %d exit %d\n%s\n%s", i+1, p.code, p.out.String(), p.err.String())
		}
		t.Logf("worker %d:\n%s%s", i+1, p.out.String(), lastLines(p.err.String(), 2))
	}
	<-victim.done
	if victim.code != -1 && victim.code != 137 {
		t.Fatalf("victim exit %d, want killed", victim.code)
	}
	for _, r := range held {
		if _, ok := taken[r]; ok {
			continue
		}
		if st.Ranges[r].State == "done" && st.Ranges[r].Owner == victim.id(0) {
			// It finished the range between the status read and the SIGKILL: nothing
			// to take over (seen once in a full run on 2 cores).
			t.Logf("range %d: the victim finished it before the kill landed", r)
			continue
		}
		t.Errorf("range %d the victim held was never seen taken over", r)
	}
	if !st.Complete() || st.Rows != int64(n) {
		t.Fatalf("status %v", st)
	}
	out, errOut, code := cli(t, "", "migrate", "verify", "--hosts", node.Hosts()[0], "--keyspace", ks, "--old", "comments_v1", "--new", "comments_v2",
		"--map", "comment_key=sortable(comment_key)")
	if code != 0 || !strings.Contains(out, "verify: ok") || !strings.Contains(out, fmt.Sprintf("old rows %d, new rows %d", n, n)) {
		t.Fatalf("verify: exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = cli(t, "", "migrate", "status", "--hosts", node.Hosts()[0], "--keyspace", ks, "--old", "comments_v1", "--new", "comments_v2",
		"--map", "comment_key=sortable(comment_key)")
	if code != 0 || !strings.Contains(out, "(complete)") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	var maxTake time.Duration
	for _, d := range taken {
		maxTake = max(maxTake, d)
	}
	t.Logf("%d rows, %d ranges, 3 worker processes, lease TTL %v: finished in %v (%.0f rows/s); killed at %v; its ranges %v taken over %v after the kill; "+
		"rows copied more than once: %d (logged every 100 rows, so up to %d more); takeovers %d; verify ok",
		n, ranges, ttl, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), killedAt.Sub(start).Round(time.Millisecond), held,
		maxTake.Round(time.Millisecond), st.CopiedTwice(), 100*len(held), st.Takeovers)
	t.Logf("status:\n%s", out)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestMigrateThroughput: the same backfill with one worker process and with three,
// side by side (CQLSAFE_MIGRATE_THROUGHPUT=1).
func TestMigrateThroughput(t *testing.T) {
	if os.Getenv("CQLSAFE_MIGRATE_THROUGHPUT") == "" {
		t.Skip("set CQLSAFE_MIGRATE_THROUGHPUT=1")
	}
	s, ks := node.Keyspace(t)
	n := migrateRows(t)
	commentTables(t, s, n, "comments_one", "comments_three")
	for _, tc := range []struct {
		table string
		procs int
	}{{"comments_one", 1}, {"comments_three", 3}} {
		args := []string{"migrate", "backfill", "--hosts", node.Hosts()[0], "--keyspace", ks, "--old", "comments_v1", "--new", tc.table,
			"--map", "comment_key=sortable(comment_key)", "--workers", "1", "--ranges", "64", "--resume", "--progress", "none"}
		start := time.Now()
		var procs []*workerProc
		for i := 0; i < tc.procs; i++ {
			procs = append(procs, startWorker(t, args...))
		}
		for _, p := range procs {
			<-p.done
			if p.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", p.code, p.out.String(), p.err.String())
			}
		}
		d := time.Since(start)
		st, err := statusOf(t, s, ks, tc.table, "comments_v1-to-"+tc.table).Status(context.Background())
		if err != nil || !st.Complete() || st.Rows != int64(n) {
			t.Fatalf("%v %v", st, err)
		}
		t.Logf("%d worker process(es): %d rows in %v: %.0f rows/s", tc.procs, n, d.Round(time.Millisecond), float64(n)/d.Seconds())
	}
}

// TestMigrateInterruptHandsLeasesBack: Ctrl-C (SIGINT) stops a backfill with exit 130
// and no lease left held; without --resume a started migration is refused; with it the
// backfill finishes and verify is clean. Bad flags are usage errors.
func TestMigrateInterruptHandsLeasesBack(t *testing.T) {
	s, ks := node.Keyspace(t)
	commentTables(t, s, 5000, "comments_v2")
	args := []string{"--hosts", node.Hosts()[0], "--keyspace", ks, "--old", "comments_v1", "--new", "comments_v2", "--map", "comment_key=sortable(comment_key)"}
	backfill := append([]string{"migrate", "backfill", "--ranges", "16", "--progress", "lines", "--progress-every", "1s"}, args...)
	for _, bad := range [][]string{
		append(append([]string{}, backfill...), "--workers", "0"), append(append([]string{}, backfill...), "--lease-ttl", "1500ms"),
		append(append([]string{}, backfill...), "--rate", "-1"), append(append([]string{}, backfill...), "--in-flight", "0"), {"migrate", "backfill"}, {"migrate", "nope"},
		append([]string{"migrate", "check", "--map", "comment_key=nope(comment_key)"}, args...),
		append([]string{"migrate", "check", "--map", "author=author"}, args...),
	} {
		if _, stderr, code := cli(t, "", bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", bad, code, stderr)
		}
	}
	w := startWorker(t, append(backfill, "--workers", "2", "--rate", "1000")...)
	time.Sleep(3 * time.Second)
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-w.done
	if w.code != 130 || !strings.Contains(w.out.String(), "interrupted") {
		t.Fatalf("interrupted backfill: exit %d\n%s\n%s", w.code, w.out.String(), w.err.String())
	}
	m := statusOf(t, s, ks, "comments_v2", "comments_v1-to-comments_v2")
	st, err := m.Status(context.Background())
	if err != nil || st.Claimed != 0 || st.Complete() || st.Done == 0 {
		t.Fatalf("after Ctrl-C: %v %v", st, err)
	}
	t.Logf("after Ctrl-C: %v\n%s", st, w.out.String())
	if _, stderr, code := cli(t, "", backfill...); code != 2 || !strings.Contains(stderr, "--resume") {
		t.Fatalf("started migration without --resume: exit %d\n%s", code, stderr)
	}
	out, stderr, code := cli(t, "", append(backfill, "--resume")...)
	if code != 0 || !strings.Contains(out, "16/16 ranges done") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, code = cli(t, "", append([]string{"migrate", "verify"}, args...)...)
	if code != 0 || !strings.Contains(out, "verify: ok") {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	// A row changed in the new table only is a difference: exit 1.
	harness.Exec(t, s, `UPDATE comments_v2 SET body = 'edited' WHERE post_id = 'post-0' AND comment_key = '10000000000000000000'`)
	out, _, code = cli(t, "", append([]string{"migrate", "verify"}, args...)...)
	if code != 1 || !strings.Contains(out, "different 1") {
		t.Fatalf("verify after an edit: exit %d\n%s", code, out)
	}
}
