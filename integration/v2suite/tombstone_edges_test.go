package v2suite

import (
	"context"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	v1 "github.com/gocql/gocql"

	tablev2 "github.com/cqlsafe/cqlsafe/gocqlv2/table"
	"github.com/cqlsafe/cqlsafe/gocqlv2/tombstone"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/schema"
	tablev1 "github.com/cqlsafe/cqlsafe/table"
	tombstonev1 "github.com/cqlsafe/cqlsafe/tombstone"
)

// The tests of this file are bugs the adversarial reviews of 2026-11-27 found, each
// described as it was before its fix; each fails on the code before that fix.

// reviewSetupAll makes a keyspace with the tables given, the tombstone table, a v2
// session through the proxy and a Store; it returns them, the harness's session and the
// keyspace.
func reviewSetupAll(t *testing.T, ddl ...string) (*tombstone.Store, func(name string) *tablev2.Table, *v1.Session, *gocql.Session, string) {
	t.Helper()
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s0, ddl...)
	if err := schema.ApplyTemplate(ctx, s0, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	s, _ := proxied(t, ks, 5*time.Second)
	st, err := tombstone.New(ctx, s, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	describe := func(name string) *tablev2.Table {
		tbl, err := tablev2.Describe(ctx, s, ks, name)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	return st, describe, s0, s, ks
}

// TestV2TombstoneReviewNonFrozenUDTNullFieldKeepsTTL: a non-frozen UDT written with a
// TTL but with a field left null. TTL(u) is [3600, null, null]: the null entries are
// fields without a cell, not cells without a TTL, yet cellTTL reads any null element as
// "an element without TTL" and drops the TTL. The record has no expiry for u, Plan
// offers no RestoreTTL, and the restore puts u (and, as the TTL-0 group is "longest",
// the row marker) in the INSERT USING TTL 0: the row that would have expired within
// the hour now lives for ever.
func TestV2TombstoneReviewNonFrozenUDTNullFieldKeepsTTL(t *testing.T) {
	st, describe, s0, _, ks := reviewSetupAll(t, `CREATE TYPE ua (a int, b blob, c text)`,
		`CREATE TABLE tu (k int PRIMARY KEY, u ua, n int)`,
		`INSERT INTO tu (k, u, n) VALUES (1, {a: 1}, 4) USING TTL 3600`,
		`INSERT INTO tu (k, u, n) VALUES (2, {a: 1}, 4) USING TTL 3600`)
	ctx := context.Background()
	check := func(drv string, k int, expires map[string]time.Time) {
		t.Helper()
		var ttlU []*int
		var ttlN *int
		if err := s0.Query(`SELECT TTL(u), TTL(n) FROM tu WHERE k = ?`, k).Scan(&ttlU, &ttlN); err != nil {
			t.Fatal(err)
		}
		_, recorded := expires["u"]
		if !recorded || len(ttlU) == 0 || ttlU[0] == nil || *ttlU[0] > 3600 {
			got := "null"
			if len(ttlU) > 0 && ttlU[0] != nil {
				got = time.Duration(*ttlU[0] * int(time.Second)).String()
			}
			t.Fatalf("%s: u was written USING TTL 3600 (n too: restored TTL(n) %v); record expiry for u: %v; restored TTL(u.a) %s, want ≈1h",
				drv, deref(ttlN), recorded, got)
		}
	}
	tbl := describe("tu")
	key := map[string]any{"k": 1}
	rec, err := st.Delete(ctx, tbl, key, "cmd")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Undelete(ctx, tbl, key, "cmd"); err != nil {
		t.Fatal(err)
	}
	check("v2", 1, rec.Expires)
	// The same row through gocql v1.7's Store.
	st1, err := tombstonev1.New(ctx, s0, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	tbl1, err := tablev1.Describe(ctx, s0, ks, "tu")
	if err != nil {
		t.Fatal(err)
	}
	key1 := map[string]any{"k": 2}
	rec1, err := st1.Delete(ctx, tbl1, key1, "cmd")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st1.Undelete(ctx, tbl1, key1, "cmd"); err != nil {
		t.Fatal(err)
	}
	check("gocql v1.7", 2, rec1.Expires)
}

func deref(p *int) any {
	if p == nil {
		return "null"
	}
	return *p
}

// TestV2TombstoneReviewNewSeesNewTable: the tombstone table is created after the v2
// session started (an operator applies the template while the service runs). The v2
// driver answers KeyspaceMetadata from its cache, refreshed only after a debounced
// schema event, and New checks the table once: ErrNoTombstoneTable for a table that
// exists. gocqlv2/table.Describe looks again for up to 3 s for exactly this reason;
// New does not.
func TestV2TombstoneReviewNewSeesNewTable(t *testing.T) {
	s0, ks := node.Keyspace(t)
	ctx := context.Background()
	s, _ := proxied(t, ks, 5*time.Second)
	if err := schema.ApplyTemplate(ctx, s0, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	if _, err := tombstone.New(ctx, s, ks, "tombstones"); err != nil {
		t.Fatalf("New right after the table was created (schema agreed): %v", err)
	}
}
