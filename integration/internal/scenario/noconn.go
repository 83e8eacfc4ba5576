package scenario

import (
	"context"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// NoConnectionYet: every connection of p's session is gone and its node refuses new
// ones for a while (a restart, or the ScyllaDB fork v1.15 closing a connection whose
// request timed out), so the driver finds no connection to send on — it answers
// ErrNoConnections without asking any retry policy. Nothing was sent: the Policy must
// wait and try again within its attempt limit, as it does for every other "nothing
// applied" error, and the write lands once. The session must reconnect within the
// Policy's backoff (a short reconnection interval). s0 reads Cassandra directly; px is
// p's session's proxy.
func NoConnectionYet(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, p Policy) {
	t.Helper()
	if err := s0.Query(`CREATE TABLE noconn_kv (id int PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	const insert = `INSERT INTO noconn_kv (id, v) VALUES (?, 'x')`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Exec(ctx, insert, 0); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	defer px.Refuse(false)
	// Until the driver says it has no connection: its pool noticed the resets and
	// cannot refill. A probe that reaches a dying connection fails otherwise; it writes
	// row -1 at most, which the check below ignores.
	px.Refuse(true)
	px.ResetAll()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := p.Raw(insert, -1)
		if err != nil && p.NoConnection(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the driver never reported no connection after every connection was reset (last: %v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		px.Refuse(false)
	}()
	start := time.Now()
	err := p.Exec(ctx, insert, 1)
	if err != nil {
		t.Errorf("no connection for 300ms: err = %v after %v; want the Policy to wait for one and the write to land", err, time.Since(start).Round(time.Millisecond))
	}
	var v string
	if err := s0.Query(`SELECT v FROM noconn_kv WHERE id = 1`).Scan(&v); err != nil || v != "x" {
		t.Errorf("after the Policy's Exec: v = %q, %v; want the row written", v, err)
	}
}
