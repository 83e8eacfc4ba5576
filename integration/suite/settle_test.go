package suite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
)

// unknownOutcome runs q through p and wants an *retry.OutcomeUnknownError back.
func unknownOutcome(t *testing.T, p *retry.Policy, q *gocql.Query) *retry.OutcomeUnknownError {
	t.Helper()
	err := p.Exec(context.Background(), q)
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) {
		t.Fatalf("err = %v, want an outcome-unknown error", err)
	}
	return ou
}

// writetime reads WRITETIME(col) of a kv row directly (not through the proxy); 0 for none.
func writetime(t *testing.T, s *gocql.Session, stmt string, args ...any) int64 {
	t.Helper()
	var wt *int64
	if err := s.Query(stmt, args...).Consistency(gocql.All).Scan(&wt); err != nil && !errors.Is(err, gocql.ErrNotFound) {
		t.Fatal(err)
	}
	if wt == nil {
		return 0
	}
	return *wt
}

// TestSettleLanded: an idempotent INSERT whose response the proxy drops after
// Cassandra applied it comes back as an unknown outcome (one attempt allowed); Settle
// finds the pinned timestamp on its cells.
func TestSettleLanded(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text, w int)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(1), retry.WithSchema(retry.SessionSchema(s)))
	ctx := context.Background()

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	ou := unknownOutcome(t, p, s.Query(`INSERT INTO kv (id, v, w) VALUES (?, ?, ?)`, 1, "x", 2))
	if px.Stats().Dropped.Load() != 1 {
		t.Fatalf("proxy dropped %d responses, want 1", px.Stats().Dropped.Load())
	}
	if wt := writetime(t, s0, `SELECT WRITETIME(v) FROM kv WHERE id = 1`); wt != ou.Timestamp {
		t.Fatalf("Cassandra holds v at %d, the error says %d", wt, ou.Timestamp)
	}
	st, err := settle.Write(ctx, s, ou)
	if err != nil {
		t.Fatal(err)
	}
	if st.Outcome != settle.Landed || st.Statements[0].Newest != ou.Timestamp || len(st.Statements[0].Columns) != 2 {
		t.Fatalf("settled %+v, want landed at %d on v and w", st, ou.Timestamp)
	}
}

// TestSettleNotVisibleThenLands: the proxy holds the request (a hung link) so the
// client times out before Cassandra has it. Settle, reading past the proxy, finds
// nothing: NotVisible. Released, the held request reaches Cassandra and applies with its
// pinned timestamp — "not visible" was "not yet" — and Settle then says Landed.
func TestSettleNotVisibleThenLands(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text, w int)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(1), retry.WithSchema(retry.SessionSchema(s)))
	ctx := context.Background()
	ins := `INSERT INTO kv (id, v, w) VALUES (?, ?, ?)`
	// Prepared before the hold: a held PREPARE would keep the EXECUTE from ever being sent.
	if err := p.Exec(ctx, s.Query(ins, 0, "warm", 0)); err != nil {
		t.Fatal(err)
	}

	px.Pause()
	released := false
	t.Cleanup(func() {
		if !released {
			px.Resume()
		}
	})
	ou := unknownOutcome(t, p, s.Query(ins, 2, "held", 3))
	st, err := settle.Write(ctx, s0, ou, settle.At(gocql.All))
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s0.Query(`SELECT COUNT(*) FROM kv WHERE id = 2`).Consistency(gocql.All).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if st.Outcome != settle.NotVisible || rows != 0 {
		t.Fatalf("while held: settled %v, %d rows; want not visible and no row", st.Outcome, rows)
	}

	px.Resume()
	released = true
	deadline := time.Now().Add(10 * time.Second)
	for writetime(t, s0, `SELECT WRITETIME(v) FROM kv WHERE id = 2`) != ou.Timestamp {
		if time.Now().After(deadline) {
			t.Fatal("the held write never reached Cassandra")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err = settle.Write(ctx, s0, ou, settle.At(gocql.All))
	if err != nil || st.Outcome != settle.Landed {
		t.Fatalf("after release: settled %v, %v; want landed", st.Outcome, err)
	}
}

// TestSettleSuperseded: the dropped write landed, then another client wrote the
// same row with a newer timestamp. While one column still carries the pinned timestamp
// Settle says Landed; once both are overwritten, Superseded.
func TestSettleSuperseded(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text, w int)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(1))
	ctx := context.Background()

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	ou := unknownOutcome(t, p, s.Query(`INSERT INTO kv (id, v, w) VALUES (?, ?, ?)`, 3, "mine", 1))
	newer := ou.Timestamp + 1000
	if err := s0.Query(`UPDATE kv USING TIMESTAMP ? SET v = ? WHERE id = ?`, newer, "theirs", 3).Exec(); err != nil {
		t.Fatal(err)
	}
	st, err := settle.Write(ctx, s, ou)
	if err != nil || st.Outcome != settle.Landed || st.Statements[0].Newest != newer {
		t.Fatalf("one column overwritten: %+v, %v; want landed (w still at %d), newest %d", st, err, ou.Timestamp, newer)
	}
	if err := s0.Query(`UPDATE kv USING TIMESTAMP ? SET w = ? WHERE id = ?`, newer, 9, 3).Exec(); err != nil {
		t.Fatal(err)
	}
	if wt := writetime(t, s0, `SELECT WRITETIME(w) FROM kv WHERE id = 3`); wt != newer {
		t.Fatalf("w at %d, want %d", wt, newer)
	}
	st, err = settle.Write(ctx, s, ou)
	if err != nil || st.Outcome != settle.Superseded {
		t.Fatalf("both overwritten: %v, %v; want superseded", st.Outcome, err)
	}
}

// TestSettleShapes: collections element by element, static columns, batches (each
// statement settled, the overwrite pattern's DELETE unsettleable but its partition's
// INSERT deciding), and counters, which cannot be settled.
func TestSettleShapes(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0,
		`CREATE TABLE t (k int, c int, s int static, v int, st set<int>, PRIMARY KEY (k, c))`,
		`CREATE TABLE kv (id int PRIMARY KEY, v text, w int)`,
		`CREATE TABLE cnt (id int PRIMARY KEY, n counter)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(1), retry.WithSchema(retry.SessionSchema(s)))
	ctx := context.Background()

	// A set addition and a static column; then another client adds a newer element and
	// overwrites the static: the element this write added still carries its timestamp.
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE t SET")))
	ou := unknownOutcome(t, p, s.Query(`UPDATE t SET st = st + ?, s = ? WHERE k = ? AND c = ?`, []int{1}, 7, 1, 1))
	if err := s0.Query(`UPDATE t USING TIMESTAMP ? SET st = st + {9}, s = 8 WHERE k = 1 AND c = 1`, ou.Timestamp+10).Exec(); err != nil {
		t.Fatal(err)
	}
	st, err := settle.Write(ctx, s, ou)
	if before50() {
		// 4.1 has no per-element WRITETIME: the set is skipped (and said so), and the
		// static alone, overwritten since, can only say a newer write won it.
		if err != nil || st.Outcome != settle.Superseded || len(st.Statements[0].Skipped) == 0 {
			t.Fatalf("set + static on %s: %+v, %v; want superseded with the set skipped", node.Version(), st, err)
		}
	} else if err != nil || st.Outcome != settle.Landed || len(st.Statements[0].Columns) != 2 || st.Statements[0].Newest != ou.Timestamp+10 {
		t.Fatalf("set + static: %+v, %v; want landed on st and s", st, err)
	}

	// A logged batch across two partitions, response dropped: each statement landed.
	isBatch := func(r faultproxy.Request) bool { return r.Opcode == faultproxy.OpBatch }
	px.SetRule(faultproxy.Next(1, isBatch, faultproxy.DropResponse))
	b := s.NewBatch(gocql.LoggedBatch)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 10, "a")
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 11, "b")
	var bou *retry.OutcomeUnknownError
	if err := p.ExecBatch(ctx, s, b); !errors.As(err, &bou) {
		t.Fatalf("logged batch: %v, want an unknown outcome", err)
	}
	st, err = settle.Write(ctx, s, bou)
	if err != nil || st.Outcome != settle.Landed || st.Statements[0].Outcome != settle.Landed || st.Statements[1].Outcome != settle.Landed {
		t.Fatalf("logged batch: %+v, %v; want both statements landed", st, err)
	}

	// The overwrite pattern: DELETE at N and INSERT at N+1 in one unlogged batch of one
	// partition, with their own timestamps. The DELETE cannot be settled; the INSERT can,
	// and decides for both (one mutation).
	px.SetRule(faultproxy.Next(1, isBatch, faultproxy.DropResponse))
	n := time.Now().UnixMicro()
	ob := s.NewBatch(gocql.UnloggedBatch)
	ob.Query(`DELETE FROM kv USING TIMESTAMP ? WHERE id = ?`, n, 12)
	ob.Query(`INSERT INTO kv (id, v) VALUES (?, ?) USING TIMESTAMP ?`, 12, "new", n+1)
	if err := p.ExecBatch(ctx, s, ob); !errors.As(err, &bou) {
		t.Fatalf("overwrite batch: %v, want an unknown outcome", err)
	}
	st, err = settle.Write(ctx, s, bou)
	if err != nil || st.Outcome != settle.Landed || st.Statements[1].Timestamp != n+1 ||
		!errors.Is(st.Statements[0].Err, settle.ErrUnsettleable) {
		t.Fatalf("overwrite batch: %+v, %v; want landed by the INSERT at N+1, the DELETE unsettleable", st, err)
	}
	if wt := writetime(t, s0, `SELECT WRITETIME(v) FROM kv WHERE id = 12`); wt != n+1 {
		t.Fatalf("row 12: v at %d, want %d", wt, n+1)
	}

	// A counter increment: no client timestamp to look for.
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE cnt")))
	ou = unknownOutcome(t, p, s.Query(`UPDATE cnt SET n = n + 1 WHERE id = ?`, 1))
	st, err = settle.Write(ctx, s, ou)
	if !errors.Is(err, settle.ErrUnsettleable) || st.Outcome != settle.Unsettleable {
		t.Fatalf("counter: %v, %v; want unsettleable", st.Outcome, err)
	}
}

// TestSettleLWT settles conditional writes whose response was lost with a SERIAL
// read: an INSERT … IF NOT EXISTS that applied, one that lost to an existing row, a
// compare-and-set answered with a CAS write timeout and with CAS_WRITE_UNKNOWN, a
// no-op UPDATE (unknown), a DELETE … IF EXISTS. The negative control re-sends the
// applied INSERT, as a naive retry would: Cassandra answers applied = false, showing
// the row this very write created.
func TestSettleLWT(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE lease (name text PRIMARY KEY, owner text, n int)`)
	// A client timeout well above an LWT's latency: the proxy keys its rules by stream
	// id, and a late response to a timed-out request on a reused stream would take the
	// place of the next request's.
	s, px := proxied(t, ks, 2*time.Second)
	p := retry.NewPolicy(retry.WithMaxAttempts(1))
	ctx := context.Background()
	isLease := faultproxy.Writes("lease")
	settleIt := func(ou *retry.OutcomeUnknownError) settle.LWTResult {
		t.Helper()
		if ou.Idempotent || len(ou.Statements) != 1 {
			t.Fatalf("LWT reported idempotent or as a batch: %+v", ou)
		}
		st, err := settle.LWT(ctx, s, ou.Statements[0], settle.After(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	owner := func(name string) string {
		var o string
		if err := s0.Query(`SELECT owner FROM lease WHERE name = ?`, name).Consistency(gocql.Consistency(gocql.Serial)).Scan(&o); err != nil && !errors.Is(err, gocql.ErrNotFound) {
			t.Fatal(err)
		}
		return o
	}
	claim := `INSERT INTO lease (name, owner, n) VALUES (?, ?, ?) IF NOT EXISTS`

	// Applied: the response to a winning claim is lost.
	px.SetRule(faultproxy.DropNext(1, isLease))
	ou := unknownOutcome(t, p, s.Query(claim, "a", "me", 1))
	if st := settleIt(ou); st.Outcome != settle.LWTApplied || owner("a") != "me" {
		t.Fatalf("winning claim: %v (%s), owner %q; want applied, me", st.Outcome, st.Why, owner("a"))
	}
	// Negative control: the naive retry of that claim says it did not apply.
	prev := map[string]any{}
	applied, err := s.Query(claim, "a", "me", 1).MapScanCAS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if applied || prev["owner"] != "me" {
		t.Fatalf("naive retry: applied = %v, row %v; expected the wrong answer applied = false over our own row", applied, prev)
	}

	// NotApplied: another client holds the lease; our claim's response is lost.
	if err := s0.Query(`INSERT INTO lease (name, owner, n) VALUES ('b', 'other', 5)`).Exec(); err != nil {
		t.Fatal(err)
	}
	px.SetRule(faultproxy.DropNext(1, isLease))
	ou = unknownOutcome(t, p, s.Query(claim, "b", "me", 1))
	if st := settleIt(ou); st.Outcome != settle.LWTNotApplied || owner("b") != "other" {
		t.Fatalf("losing claim: %v (%s), owner %q; want not applied, other", st.Outcome, st.Why, owner("b"))
	}

	// Compare-and-set answered by a CAS write timeout after Cassandra applied it, then
	// one answered CAS_WRITE_UNKNOWN.
	cas := `UPDATE lease SET owner = ? WHERE name = ? IF owner = ?`
	px.SetRule(faultproxy.Next(1, isLease, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("CAS"))))
	ou = unknownOutcome(t, p, s.Query(cas, "you", "a", "me"))
	if st := settleIt(ou); st.Outcome != settle.LWTApplied || owner("a") != "you" {
		t.Fatalf("CAS write timeout: %v (%s), owner %q; want applied, you", st.Outcome, st.Why, owner("a"))
	}
	// CAS_WRITE_UNKNOWN answered in Cassandra's place, the request never sent: the
	// client cannot tell it from one that applied; the SERIAL read can. (Answered after
	// forwarding instead, the forwarded write was seen not to apply on this node in our
	// runs — gocql reconnected and re-prepared — so the applied case is covered by the
	// CAS write timeout above.)
	casUnknown := faultproxy.ErrorFrame{Code: faultproxy.CodeCASWriteUnknown, Message: "CAS operation result is unknown (faultproxy)",
		Consistency: faultproxy.Serial, Received: 0, BlockFor: 1}
	px.SetRule(faultproxy.Next(1, isLease, faultproxy.Reply(casUnknown)))
	err = p.Exec(ctx, s.Query(cas, "me", "a", "you"))
	var cwu *gocql.RequestErrCASWriteUnknown
	if !errors.As(err, &ou) || !errors.As(err, &cwu) {
		t.Fatalf("CAS write unknown: %v, want an unknown outcome wrapping RequestErrCASWriteUnknown", err)
	}
	if st := settleIt(ou); st.Outcome != settle.LWTNotApplied || owner("a") != "you" {
		t.Fatalf("CAS write unknown, not sent: %v (%s), owner %q; want not applied, you", st.Outcome, st.Why, owner("a"))
	}

	// Unknown: an UPDATE that sets what was already there cannot be told apart from one
	// that did not apply.
	px.SetRule(faultproxy.DropNext(1, isLease))
	ou = unknownOutcome(t, p, s.Query(`UPDATE lease SET owner = ? WHERE name = ? IF n = ?`, "other", "b", 5))
	if st := settleIt(ou); st.Outcome != settle.LWTUnknown {
		t.Fatalf("no-op update: %v (%s), want unknown", st.Outcome, st.Why)
	}

	// DELETE … IF EXISTS whose response is lost: the row is gone, and the condition says
	// it was there: applied.
	px.SetRule(faultproxy.DropNext(1, isLease))
	ou = unknownOutcome(t, p, s.Query(`DELETE FROM lease WHERE name = ? IF EXISTS`, "b"))
	if st := settleIt(ou); st.Outcome != settle.LWTApplied || st.Exists {
		t.Fatalf("delete if exists: %v (%s), want applied", st.Outcome, st.Why)
	}
	// Settle refuses what is not an LWT, before reading.
	if _, err := settle.LWT(ctx, s, retry.Statement{CQL: `INSERT INTO lease (name, owner) VALUES (?, ?)`, Values: []any{"c", "x"}}); !errors.Is(err, settle.ErrUnsettleable) {
		t.Fatalf("plain insert given to SettleLWT: %v, want ErrUnsettleable", err)
	}
}

// settleReports is a settle.Observer that keeps what it hears (on the caller's
// goroutine, as settle calls it).
type settleReports struct{ reports []settle.Report }

func (o *settleReports) Settled(_ context.Context, r settle.Report) { o.reports = append(o.reports, r) }

func (o *settleReports) take() []settle.Report {
	r := o.reports
	o.reports = nil
	return r
}

// TestSettleObserverHearsOutcomes: settle.WithObserver hears each call once, with the
// outcome it returned: a dropped INSERT that landed (Write: landed, one statement), a
// dropped claim that applied (LWT: applied), and a DELETE Write cannot settle
// (unsettleable, with the error returned).
func TestSettleObserverHearsOutcomes(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text, w int)`,
		`CREATE TABLE lease (name text PRIMARY KEY, owner text, n int)`)
	s, px := proxied(t, ks, 2*time.Second)
	p := retry.NewPolicy(retry.WithMaxAttempts(1))
	ctx := context.Background()
	o := &settleReports{}

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	ou := unknownOutcome(t, p, s.Query(`INSERT INTO kv (id, v, w) VALUES (?, ?, ?)`, 1, "x", 2))
	st, err := settle.Write(ctx, s, ou, settle.WithObserver(o))
	if err != nil || st.Outcome != settle.Landed {
		t.Fatalf("settled %v, %v; want landed", st.Outcome, err)
	}
	got := o.take()
	if len(got) != 1 || got[0].Kind != settle.KindWrite || got[0].Outcome != "landed" || got[0].Statements != 1 ||
		got[0].Err != nil || got[0].Elapsed <= 0 {
		t.Fatalf("Write reported %+v, want one landed write of one statement", got)
	}

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("lease")))
	ou = unknownOutcome(t, p, s.Query(`INSERT INTO lease (name, owner, n) VALUES (?, ?, ?) IF NOT EXISTS`, "a", "me", 1))
	lst, err := settle.LWT(ctx, s, ou.Statements[0], settle.After(time.Second), settle.WithObserver(o))
	if err != nil || lst.Outcome != settle.LWTApplied {
		t.Fatalf("settled LWT %v, %v; want applied", lst.Outcome, err)
	}
	got = o.take()
	if len(got) != 1 || got[0].Kind != settle.KindLWT || got[0].Outcome != "applied" || got[0].Statements != 1 ||
		got[0].Err != nil || got[0].Elapsed < time.Second {
		t.Fatalf("LWT reported %+v, want one applied LWT, After's wait included", got)
	}

	del := &retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: `DELETE FROM kv WHERE id = ?`, Values: []any{1}}}, Timestamp: 1}
	if _, err = settle.Write(ctx, s, del, settle.WithObserver(o)); !errors.Is(err, settle.ErrUnsettleable) {
		t.Fatalf("DELETE settled: %v, want ErrUnsettleable", err)
	}
	got = o.take()
	if len(got) != 1 || got[0].Outcome != "unsettleable" || !errors.Is(got[0].Err, settle.ErrUnsettleable) {
		t.Fatalf("unsettleable Write reported %+v", got)
	}
}
