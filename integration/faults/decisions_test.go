package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
)

// everyNth answers every n-th request match selects with action a.
func everyNth(n int64, match func(faultproxy.Request) bool, a faultproxy.Action) faultproxy.Rule {
	var seen atomic.Int64
	return func(r faultproxy.Request) faultproxy.Action {
		if !match(r) || seen.Add(1)%n != 0 {
			return faultproxy.Forward
		}
		return a
	}
}

// TestFaultsCountersUnderUnavailable: one counter request in four is answered
// Unavailable by the coordinator's proxy before it reaches Cassandra (nothing applied).
// The policy retries even the counter — on the next coordinator — and the count ends
// exact. A policy that refuses every retry of a counter loses those increments.
func TestFaultsCountersUnderUnavailable(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	e.exec(t, `CREATE TABLE hits (id int PRIMARY KEY, n counter)`)
	e.setRule(everyNth(4, faultproxy.Writes("UPDATE hits"), faultproxy.Reply(faultproxy.Unavailable())))
	ctx := context.Background()
	p := policy()
	const n = 200
	var acked int64
	for i := 0; i < n; i++ {
		if err := p.Exec(ctx, e.s.Query(`UPDATE hits SET n = n + 1 WHERE id = 1`)); err != nil {
			t.Errorf("increment %d: %v", i, err)
			continue
		}
		acked++
	}
	var replied int64
	for _, px := range e.proxies {
		replied += px.Stats().Replied.Load()
	}
	var got int64
	if err := e.direct.Query(`SELECT n FROM hits WHERE id = 1`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	result{Scenario: "6. counter `+1` ×200 under injected Unavailable, cqlsafe policy", Attempted: n, Acked: acked,
		Lost: n - got, Dups: max(0, got-n), Faults: itoa(replied) + " Unavailable answered before Cassandra"}.log(t)
	if replied == 0 || got != n || acked != n {
		t.Fatalf("counter = %d after %d acked increments (%d Unavailable injected), want exactly %d", got, acked, replied, n)
	}
}

// TestFaultsLoggedBatchInBatchLog: a logged batch's write times out after the batch
// reached the batch log (write type BATCH): Cassandra will apply it. The policy does not
// re-send it (ErrBatchLogged); gocql's careless retry re-sends and its list append
// applies twice.
func TestFaultsLoggedBatchInBatchLog(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	batch := func(id int) *gocql.Batch {
		b := e.s.NewBatch(gocql.LoggedBatch)
		b.Query(`UPDATE l SET items = items + [1] WHERE id = ?`, id)
		b.Query(`INSERT INTO kv (id, v) VALUES (?, 'x')`, id)
		return b
	}
	p := policy()
	loggedBatchInBatchLog(t, e, "", loggedBatchRuns{
		raw: func(id int) error { return e.s.ExecuteBatch(batch(id)) },
		safe: func(ctx context.Context, id int) error {
			if err := p.ExecBatch(ctx, e.s, batch(id)); !errors.Is(err, retry.ErrBatchLogged) {
				return fmt.Errorf("%v, want ErrBatchLogged", err)
			}
			return nil
		},
		naive: func(id int) error {
			nb := batch(id)
			nb.RetryPolicy(harness.NaiveRetry{})
			return e.s.ExecuteBatch(nb)
		},
	})
}

// loggedBatchRuns is one driver's side of loggedBatchInBatchLog: raw executes the batch
// for id (list append to l, insert into kv) without a policy, safe through the cqlsafe
// Policy (nil: it returned ErrBatchLogged), naive with a retry that re-sends any error.
type loggedBatchRuns struct {
	raw   func(id int) error
	safe  func(ctx context.Context, id int) error
	naive func(id int) error
}

// loggedBatchInBatchLog is the logged-batch scenario on one driver: 20 batches through
// the Policy and 20 through the naive retry, each answered write timeout BATCH after
// Cassandra applied it; the Policy's are reported ErrBatchLogged and applied once, the
// naive retry's list appends apply twice (the negative control). driver names it in the
// table rows ("" for gocql v1.7).
func loggedBatchInBatchLog(t *testing.T, e *env, driver string, r loggedBatchRuns) {
	t.Helper()
	e.exec(t, `CREATE TABLE l (id int PRIMARY KEY, items list<int>)`, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	isBatch := func(r faultproxy.Request) bool { return r.Opcode == faultproxy.OpBatch }
	ctx := context.Background()
	const n = 20
	var logged, dupSafe, dupNaive int64
	for i := 0; i < n; i++ {
		_ = r.raw(1000 + i) // warm the prepared statements, fault-free
		e.setRule(faultproxy.Next(1, isBatch, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("BATCH"))))
		if err := r.safe(ctx, i); err == nil {
			logged++
		} else {
			t.Errorf("batch %d: %v", i, err)
		}
		e.setRule(faultproxy.Next(1, isBatch, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("BATCH"))))
		_ = r.naive(100 + i)
		e.setRule(nil)
		if k := items(t, e, i); k != 1 {
			dupSafe++
		}
		if k := items(t, e, 100+i); k > 1 {
			dupNaive++
		}
	}
	result{Scenario: "7. " + driver + "logged batch (list append + insert) ×20, cqlsafe policy", Attempted: n, Acked: logged, Dups: dupSafe,
		Faults: "write timeout BATCH after Cassandra applied it"}.log(t)
	result{Scenario: "7. " + driver + "the same, **naive retry** (negative control)", Attempted: n, Acked: n, Dups: dupNaive,
		Faults: "same"}.log(t)
	if dupSafe != 0 || logged != n {
		t.Fatalf("cqlsafe: %d batches reported ErrBatchLogged, %d duplicated; want %d and 0", logged, dupSafe, n)
	}
	if dupNaive == 0 {
		t.Fatal("negative control: the naive retry duplicated nothing; the fault did not bite")
	}
}

func items(t *testing.T, e *env, id int) int {
	t.Helper()
	var l []int
	if err := e.direct.Query(`SELECT items FROM l WHERE id = ?`, id).Scan(&l); err != nil && !errors.Is(err, gocql.ErrNotFound) {
		t.Fatal(err)
	}
	return len(l)
}

// TestFaultsLWTSettledUnderDroppedResponses: lease claims (INSERT … IF NOT EXISTS) whose
// responses are dropped after Paxos committed them. settle.LWT reads each row at SERIAL
// and says the claim was applied; a naive re-send of the LWT answers applied=false for
// the claim it made itself, and a caller believing it would think it lost the lease.
func TestFaultsLWTSettledUnderDroppedResponses(t *testing.T) {
	e := newEnv(t, 700*time.Millisecond)
	e.exec(t, `CREATE TABLE leases (name text PRIMARY KEY, owner text)`)
	ctx := context.Background()
	claim := `INSERT INTO leases (name, owner) VALUES (?, ?) IF NOT EXISTS`
	once := retry.NewPolicy(retry.WithMaxAttempts(1))
	const n = 20
	var applied, wrongNaive, unknown int64
	for i := 0; i < n; i++ {
		_, _ = e.s.Query(claim, "warm", "w").ScanCAS() // prepared, fault-free
		name := "job-" + itoa(int64(i))
		e.setRule(faultproxy.Next(1, faultproxy.Writes("INSERT INTO leases"), faultproxy.DropResponse))
		err := once.Exec(ctx, e.s.Query(claim, name, "worker-1"))
		if !errors.Is(err, retry.ErrOutcomeUnknown) {
			t.Errorf("claim %d: %v, want an unknown outcome", i, err)
			continue
		}
		unknown++
		e.setRule(nil)
		st, err := settle.LWT(ctx, e.s, retry.Statement{CQL: claim, Values: []any{name, "worker-1"}}, settle.After(time.Second))
		if err == nil && st.Outcome == settle.LWTApplied {
			applied++
		}
		// What a naive retry reports for the same claim.
		m := map[string]any{}
		ok, err := e.s.Query(claim, name, "worker-1").MapScanCAS(m)
		if err == nil && !ok {
			wrongNaive++
		}
	}
	result{Scenario: "8. LWT lease claims ×20, settled with settle.LWT (SERIAL read)", Attempted: n, Acked: applied,
		Faults: itoa(unknown) + " responses dropped after Paxos committed"}.log(t)
	result{Scenario: "8. the same claims re-sent naively (negative control)", Attempted: n, Lost: wrongNaive,
		Faults: "applied=false reported for the caller's own claim"}.log(t)
	if applied != unknown || unknown != n {
		t.Fatalf("settled applied %d of %d unknown claims (of %d)", applied, unknown, n)
	}
	if wrongNaive != n {
		t.Fatalf("negative control: naive re-send reported applied=false %d times of %d", wrongNaive, n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
