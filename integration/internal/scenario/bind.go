package scenario

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// Binder is a driver's retry.Policy given statements whose values a binder produces
// on every send (Session.Bind, Batch.Bind): each func sends stmt with values from
// bind, through Exec, ExecBatch (one entry) and Do. Refused says whether an error is
// the Policy's refusal (retry.ErrUnboundValues).
type Binder struct {
	Exec, ExecBatch, Do func(ctx context.Context, stmt string, bind func() []any) error
	Refused             func(err error) bool
}

// BindRefused: a write whose binder mints a new id on every call — the driver calls it
// again for every attempt and hedge, so a retried write made two rows on main — is
// refused before anything is sent, through Exec, ExecBatch and Do, with the first
// response dropped: the binder is never called, Cassandra holds no row. s0 reads
// Cassandra directly; px is the Policy's session's proxy.
func BindRefused(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, b Binder) {
	t.Helper()
	if err := s0.Query(`CREATE TABLE minted (id text PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		name string
		run  func(ctx context.Context, stmt string, bind func() []any) error
	}{{"Exec", b.Exec}, {"ExecBatch", b.ExecBatch}, {"Do", b.Do}} {
		var calls atomic.Int64
		bind := func() []any {
			n := calls.Add(1)
			id, _ := gocql.RandomUUID() // a string: either driver marshals it
			return []any{fmt.Sprintf("%s-%d", id, n), c.name}
		}
		px.SetRule(faultproxy.DropNext(1, func(r faultproxy.Request) bool {
			return r.IsWrite() && strings.Contains(r.CQL, "minted")
		}))
		err := c.run(ctx, `INSERT INTO minted (id, v) VALUES (?, ?)`, bind)
		if !b.Refused(err) {
			t.Errorf("%s with a binder: err = %v; want the unbound-values refusal", c.name, err)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("%s with a binder: the binder ran %d times; want 0 (refused before sending)", c.name, n)
		}
		n := 0
		if err := s0.Query(`SELECT COUNT(*) FROM minted WHERE v = ? ALLOW FILTERING`, c.name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s with a binder: Cassandra holds %d rows; want 0", c.name, n)
		}
	}
	px.SetRule(nil)
}
