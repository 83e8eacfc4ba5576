package scenario

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// Outbox is a driver's outbox as the scenarios use it.
type Outbox struct {
	// Record appends an idempotent write at timestamp ts and consistency cl ("": not
	// recorded), as the Policy does after an unknown outcome.
	Record func(cql string, args []any, ts int64, cl string) error
	// Replay replays it on the scenario's keyspace: applied, rejected and kept as the
	// ReplayReport counts them.
	Replay func(ctx context.Context) (applied, rejected, kept int, err error)
	// IDs lists the records' IDs, oldest first; Drop removes records by ID.
	IDs  func() ([]string, error)
	Drop func(ids ...string) (int, error)
}

// PoisonRecord: a record whose table was dropped since it was recorded fails on every
// replay. It must not hold back the records after it — each carries its own
// timestamp, so the order of replay does not change what Cassandra holds — and it must
// stay in the outbox, reported, until an operator drops it by its ID. s0 reads
// Cassandra directly, on the keyspace o replays on.
func PoisonRecord(t *testing.T, s0 *gocql.Session, o Outbox) {
	t.Helper()
	for _, q := range []string{`CREATE TABLE poison_kept (id int PRIMARY KEY, v text)`, `CREATE TABLE poison_gone (id int PRIMARY KEY, v text)`} {
		if err := s0.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	ts := time.Now().UnixMicro() - 1000
	const kept, gone = `INSERT INTO poison_kept (id, v) VALUES (?, ?)`, `INSERT INTO poison_gone (id, v) VALUES (?, ?)`
	for i, w := range []struct {
		cql string
		id  int
	}{{kept, 1}, {gone, 1}, {kept, 2}} {
		if err := o.Record(w.cql, []any{w.id, "v"}, ts+int64(i), ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := s0.Query(`DROP TABLE poison_gone`).Exec(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	applied, rejected, left, err := o.Replay(ctx)
	if applied != 2 || rejected != 1 || left != 1 || err == nil {
		t.Fatalf("replay with a record whose table was dropped: applied %d, rejected %d, kept %d, err %v; want 2, 1, 1 and the rejection reported", applied, rejected, left, err)
	}
	t.Logf("reported: %v", err)
	for i, id := range []int{1, 2} {
		var wt int64
		if err := s0.Query(`SELECT WRITETIME(v) FROM poison_kept WHERE id = ?`, id).Scan(&wt); err != nil || wt != ts+int64(2*i) {
			t.Errorf("poison_kept row %d: writetime %d, %v; want %d (replayed past the poison record)", id, wt, err, ts+int64(2*i))
		}
	}
	ids, err := o.IDs()
	if err != nil || len(ids) != 1 {
		t.Fatalf("after replay: %d records (%v), want the rejected one", len(ids), err)
	}
	if n, err := o.Drop(ids[0]); n != 1 || err != nil {
		t.Fatalf("drop: %d, %v", n, err)
	}
	if applied, _, left, err := o.Replay(ctx); applied != 0 || left != 0 || err != nil {
		t.Fatalf("replay after the drop: applied %d, kept %d, %v; want an empty outbox", applied, left, err)
	}
}

// ReplayConsistency: a write recorded at ALL is replayed at ALL, not at the session's
// consistency. Keyspace rf2 has replication factor 2 on a single node, where ALL is
// Unavailable and ONE succeeds: the record must stay in the outbox and its row must not
// be written, while a record without a consistency (an older file) is replayed at the
// session's ONE and lands. o replays on a session whose consistency is ONE.
func ReplayConsistency(t *testing.T, s0 *gocql.Session, rf2 string, o Outbox) {
	t.Helper()
	if err := s0.Query(`CREATE TABLE ` + rf2 + `.cl_kv (id int PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	ts := time.Now().UnixMicro() - 1000
	const insert = `INSERT INTO %s.cl_kv (id, v) VALUES (?, ?)`
	// The record without a consistency first: the Unavailable of the one at ALL stops
	// the replay (Cassandra unreachable at that level), keeping the rest.
	if err := o.Record(fmt.Sprintf(insert, rf2), []any{2, "unknown"}, ts, ""); err != nil {
		t.Fatal(err)
	}
	if err := o.Record(fmt.Sprintf(insert, rf2), []any{1, "at ALL"}, ts, "ALL"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	applied, _, kept, err := o.Replay(ctx)
	t.Logf("replay: applied %d, kept %d, %v", applied, kept, err)
	read := func(id int) bool {
		var v string
		err := s0.Query(`SELECT v FROM `+rf2+`.cl_kv WHERE id = ?`, id).Consistency(gocql.One).Scan(&v)
		if err != nil && err != gocql.ErrNotFound {
			t.Fatal(err)
		}
		return err == nil
	}
	if read(1) || kept != 1 || err == nil {
		t.Errorf("the write recorded at ALL: row written %v, kept %d, err %v; want it replayed at ALL (Unavailable on one node with RF 2): not written, kept, reported", read(1), kept, err)
	}
	if !read(2) {
		t.Errorf("the record without a consistency: not written at the session's ONE")
	}
}

// ExpiredWriteStillHides: a write whose TTL ran out before its replay still has an
// effect. Had the first attempt applied, its cells would have expired — and an expired
// cell, like a tombstone, still hides every older value of its column — and its nulls
// and collection overwrites are tombstones, which never expire. A replay that drops
// such a record leaves the older values showing for good. Each row holds older values
// (1 s before the record's timestamp); each record (TTL 2, first attempt 5 s ago) is
// replayed, and 1.5 s later the row must read as one execution would have left it: the
// written columns gone, the columns it did not name kept. Text and a written null, a
// non-frozen set assigned whole, a map element deleted, and a table whose
// default_time_to_live gives the TTL.
func ExpiredWriteStillHides(t *testing.T, s0 *gocql.Session, o Outbox) {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE exp_kv (id int PRIMARY KEY, v text, b text, s set<int>, m map<text, int>, keep text)`,
		`CREATE TABLE exp_def (id int PRIMARY KEY, v text, keep text) WITH default_time_to_live = 2`,
	} {
		if err := s0.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	ts := time.Now().Add(-5 * time.Second).UnixMicro()
	old := ts - 1_000_000
	for _, q := range []string{
		`INSERT INTO exp_kv (id, v, b, s, m, keep) VALUES (1, 'old', 'old', {9}, {'a': 1}, 'old') USING TIMESTAMP ?`,
		`INSERT INTO exp_kv (id, v, b, s, m, keep) VALUES (2, 'old', 'old', {9}, {'a': 1}, 'old') USING TIMESTAMP ?`,
		`INSERT INTO exp_kv (id, v, b, s, m, keep) VALUES (3, 'old', 'old', {9}, {'a': 1, 'b': 2}, 'old') USING TIMESTAMP ?`,
		`INSERT INTO exp_def (id, v, keep) VALUES (1, 'old', 'old') USING TIMESTAMP ? AND TTL 0`,
	} {
		if err := s0.Query(q, old).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []struct {
		cql  string
		args []any
	}{
		{`INSERT INTO exp_kv (id, v, b) VALUES (?, ?, ?) USING TTL 2`, []any{1, "x", nil}},
		{`UPDATE exp_kv USING TTL ? SET s = {1} WHERE id = ?`, []any{2, 2}},
		{`UPDATE exp_kv USING TTL 2 SET m['a'] = null, v = ? WHERE id = ?`, []any{"x", 3}},
		{`UPDATE exp_def SET v = ? WHERE id = ?`, []any{"x", 1}},
	} {
		if err := o.Record(w.cql, w.args, ts, ""); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	applied, rejected, kept, err := o.Replay(ctx)
	if applied != 4 || rejected != 0 || kept != 0 || err != nil {
		t.Fatalf("replay: applied %d, rejected %d, kept %d, %v; want 4 applied", applied, rejected, kept, err)
	}
	time.Sleep(1500 * time.Millisecond) // a write replayed after its TTL ran out lives at most 1 s
	type row struct {
		v, b, keep *string
		s          []int
		m          map[string]int
	}
	read := func(id int) row {
		var r row
		if err := s0.Query(`SELECT v, b, s, m, keep FROM exp_kv WHERE id = ?`, id).Scan(&r.v, &r.b, &r.s, &r.m, &r.keep); err != nil {
			t.Fatalf("exp_kv row %d: %v", id, err)
		}
		return r
	}
	str := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	if r := read(1); r.v != nil || r.b != nil || str(r.keep) != "old" || len(r.s) != 1 || r.m["a"] != 1 {
		t.Errorf("row 1 after INSERT (v, b) = ('x', null) USING TTL 2 ran out: v %s, b %s, keep %s, s %v, m %v; want v and b null (the expired cell and the null hide 'old'), the rest kept",
			str(r.v), str(r.b), str(r.keep), r.s, r.m)
	}
	if r := read(2); len(r.s) != 0 || str(r.v) != "old" {
		t.Errorf("row 2 after SET s = {1} USING TTL 2 ran out: s %v, v %s; want s empty (the assignment's tombstone removes {9}), v kept", r.s, str(r.v))
	}
	if r := read(3); r.v != nil || len(r.m) != 1 || r.m["b"] != 2 {
		t.Errorf("row 3 after SET m['a'] = null, v = 'x' USING TTL 2 ran out: v %s, m %v; want v null, m {'b': 2}", str(r.v), r.m)
	}
	var v, keep *string
	if err := s0.Query(`SELECT v, keep FROM exp_def WHERE id = 1`).Scan(&v, &keep); err != nil {
		t.Fatal(err)
	}
	if v != nil || str(keep) != "old" {
		t.Errorf("exp_def after SET v = 'x' under default_time_to_live 2 ran out: v %s, keep %s; want v null, keep 'old'", str(v), str(keep))
	}
}
