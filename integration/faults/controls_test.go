package faults

import (
	"context"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestNegativeControlCounter: counter increments under dropped responses. Retried
// naively the counter over-counts; through the policy it never exceeds the attempts.
func TestNegativeControlCounter(t *testing.T) {
	e := newEnv(t, 700*time.Millisecond)
	p := retry.NewPolicy()
	counterControl(t, e, "", func(stmt string) error {
		return e.s.Query(stmt).RetryPolicy(harness.NaiveRetry{}).Exec()
	}, func(stmt string) error {
		return p.Exec(context.Background(), e.s.Query(stmt))
	})
}

// counterControl is the counter control on one driver: naive and policy run a counter
// increment, the first retried naively, the other through the Policy.
func counterControl(t *testing.T, e *env, driver string, naive, policy func(stmt string) error) {
	t.Helper()
	e.exec(t, `CREATE TABLE hits (id int PRIMARY KEY, n counter)`)
	e.setRule(faultproxy.DropFraction(0.25, 5, faultproxy.Writes("UPDATE hits")))
	const n = 40
	var naiveAcked, policyAcked int64
	for i := 0; i < n; i++ {
		if err := naive(`UPDATE hits SET n = n + 1 WHERE id = 1`); err == nil {
			naiveAcked++
		}
		if err := policy(`UPDATE hits SET n = n + 1 WHERE id = 2`); err == nil {
			policyAcked++
		}
	}
	e.setRule(nil)
	read := func(id int) int64 {
		var v int64
		if err := e.direct.Query(`SELECT n FROM hits WHERE id = ?`, id).Consistency(gocql.All).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	naiveN, policyN := read(1), read(2)
	if naiveN <= n {
		t.Errorf("negative control did not show the over-count: naive counter %d after %d increments", naiveN, n)
	}
	if policyN > n || policyN < policyAcked {
		t.Errorf("policy counter %d: must lie between acknowledged %d and attempted %d", policyN, policyAcked, n)
	}
	result{"5a. " + driver + "counter, naive retry (negative control)", n, naiveAcked, 0, naiveN - n, "25% of counter responses dropped", 0}.log(t)
	result{"5a. " + driver + "counter, cqlsafe policy", n, policyAcked, 0, max(0, policyN-n), "same", 0}.log(t)
}

// TestNegativeControlFreshTimestamp: a write whose response is dropped is retried after
// another client wrote a newer value. With a fresh timestamp per attempt the stale retry
// overwrites the newer write (lost update); with the pinned timestamp it loses to it.
func TestNegativeControlFreshTimestamp(t *testing.T) {
	e := newEnv(t, 500*time.Millisecond)
	freshTimestampControl(t, e, "", func(id int, pinned bool) error {
		q := e.s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, id, "stale")
		if pinned {
			return retry.NewPolicy(retry.WithBackoff(800*time.Millisecond, 800*time.Millisecond), retry.WithoutJitter()).Exec(context.Background(), q)
		}
		return q.RetryPolicy(harness.NaiveRetry{Pause: 800 * time.Millisecond}).Exec()
	})
}

// freshTimestampControl is the fresh-timestamp control on one driver: write inserts
// (id, "stale") through a session with a 500 ms timeout, retried after 800 ms, through
// the Policy (pinned) or naively.
func freshTimestampControl(t *testing.T, e *env, driver string, write func(id int, pinned bool) error) {
	t.Helper()
	e.exec(t, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	run := func(id int, pinned bool) string {
		e.setRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
		done := make(chan error, 1)
		go func() { done <- write(id, pinned) }()
		time.Sleep(700 * time.Millisecond) // the first attempt timed out; the retry waits
		if err := e.direct.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, id, "newer").Exec(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		var v string
		if err := e.direct.Query(`SELECT v FROM kv WHERE id = ?`, id).Consistency(gocql.All).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	naiveV, pinnedV := run(1, false), run(2, true)
	if naiveV != "stale" {
		t.Errorf("negative control: naive retry left %q; expected it to overwrite the newer write", naiveV)
	}
	if pinnedV != "newer" {
		t.Errorf("pinned retry left %q; the newer write must survive", pinnedV)
	}
	lostNaive := int64(0)
	if naiveV == "stale" {
		lostNaive = 1
	}
	result{"5b. " + driver + "retry with fresh timestamp (negative control)", 2, 2, lostNaive, 0, "response dropped, newer write lands before the retry", 0}.log(t)
	result{"5b. " + driver + "retry with pinned timestamp (cqlsafe)", 2, 2, 0, 0, "same", 0}.log(t)
}
