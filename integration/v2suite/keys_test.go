package v2suite

import (
	"context"
	"fmt"
	"testing"
	"time"

	tablev2 "github.com/cqlsafe/cqlsafe/gocqlv2/table"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/table"
)

// TestV2TableNullTupleElementKey: a key whose tuples have NULL elements — a tuple key
// column, a tuple in a frozen list, a tuple field of a frozen UDT; rows Cassandra
// accepts — encodes to the same bytes on both drivers; each decodes the other's, and
// the v2 table's decoded key encodes back to the same bytes and deletes the row (found
// by review: the v2 driver panics on a NULL tuple element, and DecodeKey called such a
// key corrupt).
func TestV2TableNullTupleElementKey(t *testing.T) {
	s1, ks := node.Keyspace(t)
	harness.Exec(t, s1, `CREATE TYPE pt (x int, tg frozen<tuple<int, text>>)`,
		`CREATE TABLE k (id int, ck frozen<tuple<int, text>>, lk frozen<list<frozen<tuple<int, text>>>>, uk frozen<pt>, v int,
			PRIMARY KEY (id, ck, lk, uk))`)
	ctx := context.Background()
	s2, _ := proxied(t, ks, 5*time.Second)
	t1, err := table.Describe(ctx, s1, ks, "k")
	if err != nil {
		t.Fatal(err)
	}
	t2, err := tablev2.Describe(ctx, s2, ks, "k")
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]any{"id": 1, "ck": []any{nil, "x"}, "lk": [][]any{{nil, "y"}},
		"uk": map[string]any{"x": 1, "tg": []any{2, nil}}, "v": 7}
	// Written through v2: Cassandra takes the NULL elements in the key.
	vals, err := t2.Values(row)
	if err != nil {
		t.Fatal(err)
	}
	cql, args, err := t2.InsertRow(0, vals)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(cql, args...).ExecContext(ctx); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var n int
	if err := s1.Query(`SELECT COUNT(*) FROM k WHERE id = 1`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows %d %v", n, err)
	}
	k1, err := t1.KeyValues(row)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := t2.KeyValues(row)
	if err != nil {
		t.Fatal(err)
	}
	e1, err1 := t1.EncodeKey(k1)
	e2, err2 := t2.EncodeKey(k2)
	if err1 != nil || err2 != nil || string(e1) != string(e2) {
		t.Fatalf("EncodeKey: v1 %x %v, v2 %x %v", e1, err1, e2, err2)
	}
	if d1, err := t1.DecodeKey(e2); err != nil {
		t.Fatalf("v1 DecodeKey of v2's key: %v", err)
	} else {
		t.Logf("v1 decodes v2's key: %v", d1)
	}
	d2, err := t2.DecodeKey(e1)
	if err != nil {
		t.Fatalf("v2 DecodeKey of a key v1 (and v2) encoded, of a row Cassandra holds: %v", err)
	}
	if back, err := t2.EncodeKey(d2); err != nil || string(back) != string(e1) {
		t.Fatalf("v2 re-encodes its decoded key %s as %x (%v), want %x", fmt.Sprint(d2), back, err, e1)
	}
	kargs, err := t2.KeyArgs(d2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(t2.DeleteRow(), append([]any{int64(1) << 60}, kargs...)...).ExecContext(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s1.Query(`SELECT COUNT(*) FROM k WHERE id = 1`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after DeleteRow by the decoded key: %d %v", n, err)
	}
}
