package scenario

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// Stamped runs stmt through a Policy with the driver's own WithTimestamp(own) — on the
// query, or on a one-statement batch when batch — and with AtTimestamp(at) when at is
// not 0.
type Stamped func(ctx context.Context, batch bool, own, at int64, stmt string) error

// CallerTimestamp: a timestamp the caller set with the driver's WithTimestamp is the
// pin — it was silently replaced by the Policy's — kept through a retry after a dropped
// response, for a query and a batch; one that differs from AtTimestamp is refused and
// nothing is written. s0 reads Cassandra directly; px is the Policy's session's proxy.
func CallerTimestamp(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, exec Stamped) {
	t.Helper()
	if err := s0.Query(`CREATE TABLE own_ts (id int PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	own := time.Now().UnixMicro() - 5_000_000 // older than anything the Policy's clock draws
	insert := func(id int) string { return fmt.Sprintf(`INSERT INTO own_ts (id, v) VALUES (%d, 'x')`, id) }
	for i, batch := range []bool{false, true} {
		px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO own_ts")))
		if err := exec(ctx, batch, own+int64(i), 0, insert(i+1)); err != nil {
			t.Fatalf("batch %v, WithTimestamp(%d) and a dropped response: %v", batch, own+int64(i), err)
		}
		var wt int64
		if err := s0.Query(`SELECT WRITETIME(v) FROM own_ts WHERE id = ?`, i+1).Scan(&wt); err != nil || wt != own+int64(i) {
			t.Errorf("batch %v: WRITETIME %d (%v), want the caller's %d", batch, wt, err, own+int64(i))
		}
	}
	px.SetRule(nil)
	if err := exec(ctx, false, own, own+7, insert(3)); err == nil {
		t.Fatal("WithTimestamp and a different AtTimestamp: sent, want refused")
	}
	if err := s0.Query(`SELECT v FROM own_ts WHERE id = 3`).Scan(new(string)); err != gocql.ErrNotFound {
		t.Fatalf("the refused write: %v, want no row", err)
	}
}
