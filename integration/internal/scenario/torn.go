package scenario

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// TornConnection: Cassandra applies a write, then the connection fails in a way the
// driver reports as a protocol error — a response frame of an unknown protocol
// version ("unsupported protocol response version"), after which the driver closes the
// connection and fails every request in flight on it. The write may have applied: a
// counter increment (not repeatable) must come back as the outcome-unknown error, not a
// plain error, and an idempotent INSERT must be re-sent and succeed. s0 reads Cassandra
// directly; px is p's session's proxy.
func TornConnection(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, p Policy) {
	t.Helper()
	for _, q := range []string{`CREATE TABLE torn_hits (id int PRIMARY KEY, n counter)`, `CREATE TABLE torn_kv (id int PRIMARY KEY, v text)`} {
		if err := s0.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const incr = `UPDATE torn_hits SET n = n + 1 WHERE id = ?`
	const insert = `INSERT INTO torn_kv (id, v) VALUES (?, 'x')`
	px.SetRule(nil)
	for _, st := range []string{incr, insert} {
		if err := p.Exec(ctx, st, 0); err != nil {
			t.Fatalf("warm-up %q: %v", st, err)
		}
	}
	on := func(table string) func(faultproxy.Request) bool {
		return func(r faultproxy.Request) bool { return r.IsWrite() && strings.Contains(r.CQL, table) }
	}
	px.SetRule(faultproxy.Next(1, on("torn_hits"), faultproxy.Garbage))
	err := p.Exec(ctx, incr, 1)
	if unknown, _ := p.Unknown(err); !unknown {
		t.Errorf("counter, connection torn after the write: err = %v; want the outcome-unknown error", err)
	}
	var n int64
	if err := s0.Query(`SELECT n FROM torn_hits WHERE id = 1`).Scan(&n); err != nil || n != 1 {
		t.Errorf("counter: n = %d, %v; want 1 (applied once, never re-sent)", n, err)
	}
	px.SetRule(faultproxy.Next(1, on("torn_kv"), faultproxy.Garbage))
	if err := p.Exec(ctx, insert, 2); err != nil {
		t.Errorf("idempotent insert, connection torn after the write: %v; want it re-sent", err)
	}
	var v string
	if err := s0.Query(`SELECT v FROM torn_kv WHERE id = 2`).Scan(&v); err != nil || v != "x" {
		t.Errorf("insert: v = %q, %v", v, err)
	}
	px.SetRule(nil)
}
