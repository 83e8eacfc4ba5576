package v2suite

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	v1 "github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/settle"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// unknownV2 runs q through p and wants an *retry.OutcomeUnknownError back.
func unknownV2(t *testing.T, p *retry.Policy, q *gocql.Query) *retry.OutcomeUnknownError {
	t.Helper()
	var ou *retry.OutcomeUnknownError
	if err := p.Exec(context.Background(), q); !errors.As(err, &ou) {
		t.Fatalf("err = %v, want an outcome-unknown error", err)
	}
	return ou
}

// writetimeV1 reads one WRITETIME at ALL with the harness's own session (not through
// the proxy, not through the driver under test); 0 for none.
func writetimeV1(t *testing.T, s *v1.Session, stmt string, args ...any) int64 {
	t.Helper()
	var wt *int64
	if err := s.Query(stmt, args...).Consistency(v1.All).Scan(&wt); err != nil && !errors.Is(err, v1.ErrNotFound) {
		t.Fatal(err)
	}
	if wt == nil {
		return 0
	}
	return *wt
}

// TestV2SettleWrite: gocqlv2/settle.Write on what Cassandra holds after faults, through
// the v2 driver: an INSERT whose response was dropped after it applied is Landed (its
// cells at the pinned timestamp), then Superseded once another client writes newer;
// one answered with a write timeout the proxy sent in Cassandra's place (never
// forwarded) is NotVisible; a non-frozen set, a non-frozen UDT (described with the
// keyspace's user types) and a static column are read element by element; a logged
// batch settles each statement; the overwrite pattern's DELETE is unsettleable and its
// INSERT decides; a counter increment is refused; bad options are errors before any
// read.
func TestV2SettleWrite(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0,
		`CREATE TYPE addr (street text, zip int)`,
		`CREATE TABLE kv (id int PRIMARY KEY, v text, w int)`,
		`CREATE TABLE t (k int, c int, s int static, v int, st set<int>, a addr, PRIMARY KEY (k, c))`,
		`CREATE TABLE cnt (id int PRIMARY KEY, n counter)`)
	s, px := proxied(t, ks, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithMaxAttempts(1))
	ctx := context.Background()

	// Landed, then Superseded.
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	ou := unknownV2(t, p, s.Query(`INSERT INTO kv (id, v, w) VALUES (?, ?, ?)`, 1, "x", 2))
	if px.Stats().Dropped.Load() != 1 {
		t.Fatalf("proxy dropped %d responses, want 1", px.Stats().Dropped.Load())
	}
	if wt := writetimeV1(t, s0, `SELECT WRITETIME(v) FROM kv WHERE id = 1`); wt != ou.Timestamp {
		t.Fatalf("Cassandra holds v at %d, the error says %d", wt, ou.Timestamp)
	}
	st, err := settle.Write(ctx, s, ou)
	if err != nil || st.Outcome != settle.Landed || st.Statements[0].Newest != ou.Timestamp || len(st.Statements[0].Columns) != 2 ||
		st.Consistency != gocql.Quorum {
		t.Fatalf("dropped response: %+v, %v; want landed at %d on v and w, read at QUORUM", st, err, ou.Timestamp)
	}
	if err := s0.Query(`UPDATE kv USING TIMESTAMP ? SET v = 'y', w = 3 WHERE id = 1`, ou.Timestamp+5).Exec(); err != nil {
		t.Fatal(err)
	}
	if st, err = settle.Write(ctx, s, ou, settle.At(gocql.All)); err != nil || st.Outcome != settle.Superseded || st.Statements[0].Newest != ou.Timestamp+5 {
		t.Fatalf("after a newer write: %+v, %v; want superseded by %d", st, err, ou.Timestamp+5)
	}

	// NotVisible: the proxy answers a write timeout itself; Cassandra never saw the write.
	px.SetRule(faultproxy.Next(1, faultproxy.Writes("INSERT INTO kv"), faultproxy.Reply(faultproxy.WriteTimeout("SIMPLE"))))
	ou = unknownV2(t, p, s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 2, "never"))
	if wt := writetimeV1(t, s0, `SELECT WRITETIME(v) FROM kv WHERE id = 2`); wt != 0 {
		t.Fatalf("row 2 holds v at %d, want no row", wt)
	}
	if st, err = settle.Write(ctx, s, ou, settle.At(gocql.All)); err != nil || st.Outcome != settle.NotVisible {
		t.Fatalf("never sent: %+v, %v; want not visible", st, err)
	}

	// A set addition, a UDT field and a static; another client then adds a newer element
	// and overwrites the static: the element this write added still carries its timestamp.
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE t SET")))
	ou = unknownV2(t, p, s.Query(`UPDATE t SET st = st + ?, a = ?, s = ? WHERE k = ? AND c = ?`,
		[]int{1}, map[string]any{"street": "Main", "zip": 7}, 7, 1, 1))
	if err := s0.Query(`UPDATE t USING TIMESTAMP ? SET st = st + {9}, s = 8 WHERE k = 1 AND c = 1`, ou.Timestamp+10).Exec(); err != nil {
		t.Fatal(err)
	}
	if wt := writetimeV1(t, s0, `SELECT WRITETIME(a.street) FROM t WHERE k = 1 AND c = 1`); wt != ou.Timestamp {
		t.Fatalf("a.street at %d, want %d", wt, ou.Timestamp)
	}
	if st, err = settle.Write(ctx, s, ou); err != nil || st.Outcome != settle.Landed || len(st.Statements[0].Columns) != 3 || st.Statements[0].Newest != ou.Timestamp+10 {
		t.Fatalf("set + udt + static: %+v, %v; want landed on st, a and s", st, err)
	}

	// A logged batch across two partitions, response dropped: each statement landed.
	isBatch := func(r faultproxy.Request) bool { return r.Opcode == faultproxy.OpBatch }
	px.SetRule(faultproxy.Next(1, isBatch, faultproxy.DropResponse))
	b := s.Batch(gocql.LoggedBatch)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 10, "a")
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 11, "b")
	var bou *retry.OutcomeUnknownError
	if err := p.ExecBatch(ctx, s, b); !errors.As(err, &bou) {
		t.Fatalf("logged batch: %v, want an unknown outcome", err)
	}
	if st, err = settle.Write(ctx, s, bou); err != nil || st.Outcome != settle.Landed || st.Statements[0].Outcome != settle.Landed || st.Statements[1].Outcome != settle.Landed {
		t.Fatalf("logged batch: %+v, %v; want both statements landed", st, err)
	}

	// The overwrite pattern: DELETE at N, INSERT at N+1, one partition, unlogged.
	px.SetRule(faultproxy.Next(1, isBatch, faultproxy.DropResponse))
	n := time.Now().UnixMicro()
	ob := s.Batch(gocql.UnloggedBatch)
	ob.Query(`DELETE FROM kv USING TIMESTAMP ? WHERE id = ?`, n, 12)
	ob.Query(`INSERT INTO kv (id, v) VALUES (?, ?) USING TIMESTAMP ?`, 12, "new", n+1)
	if err := p.ExecBatch(ctx, s, ob); !errors.As(err, &bou) {
		t.Fatalf("overwrite batch: %v, want an unknown outcome", err)
	}
	st, err = settle.Write(ctx, s, bou)
	if err != nil || st.Outcome != settle.Landed || st.Statements[1].Timestamp != n+1 || !errors.Is(st.Statements[0].Err, settle.ErrUnsettleable) {
		t.Fatalf("overwrite batch: %+v, %v; want landed by the INSERT at N+1, the DELETE unsettleable", st, err)
	}
	if wt := writetimeV1(t, s0, `SELECT WRITETIME(v) FROM kv WHERE id = 12`); wt != n+1 {
		t.Fatalf("row 12: v at %d, want %d", wt, n+1)
	}

	// A counter increment: not re-sent, and not settleable.
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE cnt")))
	ou = unknownV2(t, p, s.Query(`UPDATE cnt SET n = n + 1 WHERE id = ?`, 1))
	var cnt int64
	if err := s0.Query(`SELECT n FROM cnt WHERE id = 1`).Scan(&cnt); err != nil || cnt != 1 {
		t.Fatalf("counter holds %d (%v), want 1 (sent once)", cnt, err)
	}
	if st, err = settle.Write(ctx, s, ou); !errors.Is(err, settle.ErrUnsettleable) || st.Outcome != settle.Unsettleable {
		t.Fatalf("counter: %v, %v; want unsettleable", st.Outcome, err)
	}

	// Bad input: the option's error, before anything is read (the write and the LWT
	// given would settle otherwise: the bad option alone fails them).
	landed, _ := reviewUnknown("kv", ou.Timestamp)
	if _, err := settle.Write(ctx, s, landed, settle.At(gocql.Serial)); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Fatalf("At(SERIAL): %v, want refused", err)
	}
	if _, err := settle.Write(ctx, s, nil); err == nil || errors.Is(err, settle.ErrUnsettleable) {
		t.Fatalf("nil error: %v, want refused", err)
	}
	lwt := retry.Statement{CQL: `INSERT INTO kv (id, v) VALUES (?, ?) IF NOT EXISTS`, Values: []any{40, "x"}}
	if _, err := settle.LWT(ctx, s, lwt, settle.Serial(gocql.Quorum)); err == nil || !strings.Contains(err.Error(), "want SERIAL or LOCAL_SERIAL") {
		t.Fatalf("Serial(QUORUM): %v, want refused", err)
	}
}

// TestV2SettleLWT: gocqlv2/settle.LWT settles conditional writes whose response was lost
// with a SERIAL read through the v2 driver: a winning INSERT … IF NOT EXISTS (and the
// negative control: the naive re-send says applied = false over its own row), a losing
// one, a compare-and-set answered with a CAS write timeout after it applied, a no-op
// UPDATE (unknown), a DELETE … IF EXISTS; a plain INSERT is refused before reading.
func TestV2SettleLWT(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE lease (name text PRIMARY KEY, owner text, n int, tags set<text>)`)
	s, px := proxied(t, ks, 2*time.Second)
	p := retry.NewPolicy(retry.WithMaxAttempts(1))
	ctx := context.Background()
	isLease := faultproxy.Writes("lease")
	settleIt := func(ou *retry.OutcomeUnknownError) settle.LWTResult {
		t.Helper()
		st, err := settle.LWT(ctx, s, ou.Statements[0], settle.After(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	owner := func(name string) string {
		var o string
		if err := s0.Query(`SELECT owner FROM lease WHERE name = ?`, name).Consistency(v1.Consistency(v1.Serial)).Scan(&o); err != nil && !errors.Is(err, v1.ErrNotFound) {
			t.Fatal(err)
		}
		return o
	}
	claim := `INSERT INTO lease (name, owner, n, tags) VALUES (?, ?, ?, ?) IF NOT EXISTS`

	px.SetRule(faultproxy.DropNext(1, isLease))
	ou := unknownV2(t, p, s.Query(claim, "a", "me", 1, []string{"z", "a"}))
	if st := settleIt(ou); st.Outcome != settle.LWTApplied || !st.Exists || owner("a") != "me" {
		t.Fatalf("winning claim: %v (%s), owner %q; want applied, me", st.Outcome, st.Why, owner("a"))
	}
	prev := map[string]any{}
	applied, err := s.Query(claim, "a", "me", 1, []string{"z", "a"}).MapScanCAS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if applied || prev["owner"] != "me" {
		t.Fatalf("naive retry: applied = %v, row %v; expected the wrong answer applied = false over our own row", applied, prev)
	}

	if err := s0.Query(`INSERT INTO lease (name, owner, n) VALUES ('b', 'other', 5)`).Exec(); err != nil {
		t.Fatal(err)
	}
	px.SetRule(faultproxy.DropNext(1, isLease))
	ou = unknownV2(t, p, s.Query(claim, "b", "me", 1, []string{"x"}))
	if st := settleIt(ou); st.Outcome != settle.LWTNotApplied || owner("b") != "other" {
		t.Fatalf("losing claim: %v (%s), owner %q; want not applied, other", st.Outcome, st.Why, owner("b"))
	}

	cas := `UPDATE lease SET owner = ? WHERE name = ? IF owner = ?`
	px.SetRule(faultproxy.Next(1, isLease, faultproxy.ForwardThenReply(faultproxy.WriteTimeout("CAS"))))
	ou = unknownV2(t, p, s.Query(cas, "you", "a", "me"))
	if st := settleIt(ou); st.Outcome != settle.LWTApplied || owner("a") != "you" {
		t.Fatalf("CAS write timeout: %v (%s), owner %q; want applied, you", st.Outcome, st.Why, owner("a"))
	}

	px.SetRule(faultproxy.DropNext(1, isLease))
	ou = unknownV2(t, p, s.Query(`UPDATE lease SET owner = ? WHERE name = ? IF n = ?`, "other", "b", 5))
	if st := settleIt(ou); st.Outcome != settle.LWTUnknown {
		t.Fatalf("no-op update: %v (%s), want unknown", st.Outcome, st.Why)
	}

	px.SetRule(faultproxy.DropNext(1, isLease))
	ou = unknownV2(t, p, s.Query(`DELETE FROM lease WHERE name = ? IF EXISTS`, "b"))
	if st := settleIt(ou); st.Outcome != settle.LWTApplied || st.Exists {
		t.Fatalf("delete if exists: %v (%s), want applied", st.Outcome, st.Why)
	}
	if _, err := settle.LWT(ctx, s, retry.Statement{CQL: `INSERT INTO lease (name, owner) VALUES (?, ?)`, Values: []any{"c", "x"}}); !errors.Is(err, settle.ErrUnsettleable) {
		t.Fatalf("plain insert given to LWT: %v, want ErrUnsettleable", err)
	}
}
