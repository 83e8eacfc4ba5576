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
