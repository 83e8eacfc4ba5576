package scenario

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// DoRemembers: Do's first run of a step loses its response after Cassandra applied it
// (may have applied) and then meets Unavailable; its second run meets Unavailable on
// every attempt. The row exists, so Do's answer must be the outcome-unknown error —
// not the last run's bare Unavailable. do runs one INSERT as a step of retry.Do with
// two attempts per step and two runs; unknown says whether an error is the
// outcome-unknown error. s0 reads Cassandra directly; px is the session's proxy.
func DoRemembers(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, do func(ctx context.Context, stmt string, args ...any) error, unknown func(error) bool) {
	t.Helper()
	if err := s0.Query(`CREATE TABLE do_kv (id int PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const insert = `INSERT INTO do_kv (id, v) VALUES (?, 'x')`
	px.SetRule(nil)
	if err := do(ctx, insert, 0); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	var n atomic.Int64
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if !r.IsWrite() || !strings.Contains(r.CQL, "do_kv") {
			return faultproxy.Forward
		}
		if n.Add(1) == 1 {
			return faultproxy.DropResponse // applied; the response is lost
		}
		return faultproxy.Reply(faultproxy.Unavailable())
	})
	err := do(ctx, insert, 1)
	px.SetRule(nil)
	if !unknown(err) {
		t.Errorf("Do after a lost response then Unavailable on every later attempt: err = %v; want the outcome-unknown error", err)
	}
	var v string
	if err := s0.Query(`SELECT v FROM do_kv WHERE id = 1`).Scan(&v); err != nil || v != "x" {
		t.Errorf("row: %q, %v; the first attempt was forwarded and applied", v, err)
	}
	if got := n.Load(); got < 3 {
		t.Errorf("%d sends; want at least 3 (the second run must have run)", got)
	}
}
