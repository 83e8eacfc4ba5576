package suite

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/integration/harness"
)

// TestClientidTimeUUIDOrderMatchesCassandra: TimeUUIDs made by clientid come back from a timeuuid
// clustering column in exactly the order clientid.Compare gives, including equal times
// and clock-sequence bytes on both sides of 0x80 (Cassandra compares them signed).
func TestClientidTimeUUIDOrderMatchesCassandra(t *testing.T) {
	s, _ := node.Keyspace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	harness.Exec(t, s, `CREATE TABLE ids (p int, id timeuuid, PRIMARY KEY (p, id))`)

	base := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	var ids []gocql.UUID
	for i := 0; i < 400; i++ {
		tt := base.Add(time.Duration(rng.IntN(30)) * 100 * time.Nanosecond) // many equal ticks
		switch i % 5 {
		case 0:
			ids = append(ids, clientid.NewTimeUUID(tt))
		case 1:
			ids = append(ids, clientid.TimeUUIDFromKey(tt, []byte{byte(i), byte(i >> 8)}))
		case 2:
			u := clientid.NewTimeUUID(tt)
			u[9] = byte(0x7e + rng.IntN(4)) // straddle the signed boundary
			u[10] = byte(rng.IntN(256))
			ids = append(ids, u)
		case 3:
			ids = append(ids, clientid.MinTimeUUID(tt))
		case 4:
			ids = append(ids, clientid.MaxTimeUUID(tt))
		}
	}
	for _, id := range ids {
		if err := s.Query(`INSERT INTO ids (p, id) VALUES (1, ?)`, id).WithContext(ctx).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var got []gocql.UUID
	iter := s.Query(`SELECT id FROM ids WHERE p = 1`).WithContext(ctx).Iter()
	var id gocql.UUID
	for iter.Scan(&id) {
		got = append(got, id)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(ids)
	slices.SortFunc(want, clientid.Compare)
	want = slices.Compact(want) // Min/Max of equal ticks repeat; Cassandra stores them once
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("order differs at %d of %d/%d: Cassandra %s, Compare %s", i, len(got), len(want), got[i], want[i])
			}
		}
		t.Fatalf("Cassandra returned %d ids, Compare order has %d", len(got), len(want))
	}
}

// TestClientidMinMaxTimeUUIDMatchCQL: ranges bounded by clientid.MinTimeUUID/MaxTimeUUID select
// the same rows as CQL's minTimeuuid/maxTimeuuid of the same millisecond.
func TestClientidMinMaxTimeUUIDMatchCQL(t *testing.T) {
	s, _ := node.Keyspace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	harness.Exec(t, s, `CREATE TABLE ev (p int, id timeuuid, PRIMARY KEY (p, id))`)
	base := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	// Events on and around millisecond boundaries, to 100 ns.
	for ms := 0; ms < 6; ms++ {
		for _, off := range []time.Duration{0, 100, 500 * time.Microsecond, time.Millisecond - 100} {
			tt := base.Add(time.Duration(ms)*time.Millisecond + off)
			if err := s.Query(`INSERT INTO ev (p, id) VALUES (1, ?)`, clientid.NewTimeUUID(tt)).WithContext(ctx).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	collect := func(q string, args ...any) []gocql.UUID {
		var out []gocql.UUID
		iter := s.Query(q, args...).WithContext(ctx).Iter()
		var id gocql.UUID
		for iter.Scan(&id) {
			out = append(out, id)
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, r := range [][2]int{{1, 1}, {1, 3}, {0, 5}, {2, 4}} {
		from := base.Add(time.Duration(r[0]) * time.Millisecond)
		to := base.Add(time.Duration(r[1]) * time.Millisecond)
		cql := collect(`SELECT id FROM ev WHERE p = 1 AND id >= minTimeuuid(?) AND id <= maxTimeuuid(?)`, from, to)
		ours := collect(`SELECT id FROM ev WHERE p = 1 AND id >= ? AND id <= ?`,
			clientid.MinTimeUUID(from), clientid.MaxTimeUUID(to.Add(time.Millisecond-100)))
		if len(cql) == 0 || !slices.Equal(cql, ours) {
			t.Errorf("ms %d..%d: CQL functions selected %d rows, clientid bounds %d", r[0], r[1], len(cql), len(ours))
		}
		// The bounds themselves are the same values.
		var minCQL, maxCQL gocql.UUID
		// The type hints pick the timestamp overloads: Cassandra 4.1 calls an untyped
		// marker in a selector ambiguous.
		if err := s.Query(`SELECT minTimeuuid((timestamp)?), maxTimeuuid((timestamp)?) FROM system.local`, from, to).WithContext(ctx).Scan(&minCQL, &maxCQL); err != nil {
			t.Fatal(err)
		}
		if minCQL != clientid.MinTimeUUID(from) || maxCQL != clientid.MaxTimeUUID(to.Add(time.Millisecond-100)) {
			t.Errorf("bounds differ: CQL %s %s, clientid %s %s", minCQL, maxCQL,
				clientid.MinTimeUUID(from), clientid.MaxTimeUUID(to.Add(time.Millisecond-100)))
		}
	}
}
