package v2suite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	retryv1 "github.com/cqlsafe/cqlsafe/retry"
)

// TestRetryCollectionsOfUDTsBothDrivers: a non-frozen list of a UDT
// (list<frozen<address>>), judged with the session's schema metadata, on both drivers.
// Its whole assignment is not repeatable (each repeat appends the elements again), so a
// dropped response leaves it sent once: two elements in Cassandra, an unknown outcome.
// A set of the same UDT is repeatable: retried, two elements. The v2 driver cannot parse
// the list's type (its metadata calls it an unknown custom type): read as one cell, the
// list assignment was retried and held four elements.
func TestRetryCollectionsOfUDTsBothDrivers(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TYPE address (street text, n int)`,
		`CREATE TABLE lu (id int PRIMARY KEY, l list<frozen<address>>, s set<frozen<address>>)`)
	two := []map[string]any{{"street": "a", "n": 1}, {"street": "b", "n": 2}}
	count := func(id int) (int, int) {
		var l, s []map[string]any
		if err := s0.Query(`SELECT l, s FROM lu WHERE id = ?`, id).Scan(&l, &s); err != nil {
			t.Fatal(err)
		}
		return len(l), len(s)
	}
	ctx := context.Background()

	// v2
	s2, px2 := proxied(t, ks, 300*time.Millisecond)
	p2 := retry.NewPolicy(retry.WithBackoff(time.Millisecond, 5*time.Millisecond), retry.WithSchema(retry.SessionSchema(s2)))
	px2.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE lu SET l")))
	if err := p2.Exec(ctx, s2.Query(`UPDATE lu SET l = ? WHERE id = ?`, two, 1)); !errors.Is(err, retry.ErrNotIdempotent) {
		t.Fatalf("v2, list of UDTs, dropped response: %v, want a non-repeatable unknown outcome", err)
	}
	px2.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE lu SET s")))
	if err := p2.Exec(ctx, s2.Query(`UPDATE lu SET s = ? WHERE id = ?`, two, 1)); err != nil {
		t.Fatalf("v2, set of UDTs, dropped response: %v, want retried", err)
	}
	if l, s := count(1); l != 2 || s != 2 {
		t.Fatalf("v2: list %d, set %d elements; want 2 and 2 (the list sent once)", l, s)
	}

	// gocql v1.7
	px1, err := faultproxy.Start(node.Hosts()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px1.Close() })
	cl, err := node.ClusterVia(px1.Addr(), ks)
	if err != nil {
		t.Fatal(err)
	}
	cl.Timeout = 300 * time.Millisecond
	s1, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s1.Close)
	p1 := retryv1.NewPolicy(retryv1.WithBackoff(time.Millisecond, 5*time.Millisecond), retryv1.WithSchema(retryv1.SessionSchema(s1)))
	px1.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE lu SET l")))
	if err := p1.Exec(ctx, s1.Query(`UPDATE lu SET l = ? WHERE id = ?`, two, 2)); !errors.Is(err, retryv1.ErrNotIdempotent) {
		t.Fatalf("v1, list of UDTs, dropped response: %v, want a non-repeatable unknown outcome", err)
	}
	px1.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE lu SET s")))
	if err := p1.Exec(ctx, s1.Query(`UPDATE lu SET s = ? WHERE id = ?`, two, 2)); err != nil {
		t.Fatalf("v1, set of UDTs, dropped response: %v, want retried", err)
	}
	if l, s := count(2); l != 2 || s != 2 {
		t.Fatalf("v1: list %d, set %d elements; want 2 and 2 (the list sent once)", l, s)
	}
}
