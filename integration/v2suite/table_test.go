package v2suite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	gocqlv1 "github.com/gocql/gocql"
	"gopkg.in/inf.v0"

	tablev2 "github.com/cqlsafe/cqlsafe/gocqlv2/table"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/table"
)

// TestV2TableEveryColumnType: a table with every kind of column — a composite partition
// key with a blob, a tuple clustering column, a static, non-frozen and frozen list, set,
// map and UDT, a tuple, a vector, and the scalars whose Go types differ between the
// drivers — described by both drivers' table packages. The statements they build are
// the same text and their key encodings the same bytes (a key one driver recorded, the
// other decodes). The same row written through each (Values, InsertRow, pinned
// timestamp) reads back the same from Cassandra, at the pinned WRITETIME; an upsert
// with nil collections (pointers to nil slices and maps) writes UNSET and keeps what
// Cassandra holds.
func TestV2TableEveryColumnType(t *testing.T) {
	s1, ks := node.Keyspace(t)
	harness.Exec(t, s1, `CREATE TYPE addr (street text, "No" int)`,
		`CREATE TABLE every (id int, b blob, ck frozen<tuple<int, text>>, st text static,
			l list<int>, s set<text>, m map<text, int>, fl frozen<list<int>>,
			o addr, fo frozen<addr>, lo list<frozen<addr>>, tp tuple<int, text>, v vector<float, 3>,
			ts timestamp, u uuid, dec decimal, vi varint, ip inet, d date, du duration, n bigint,
			PRIMARY KEY ((id, b), ck))`)
	ctx := context.Background()
	s2, _ := proxied(t, ks, 5*time.Second)
	t1, err := table.Describe(ctx, s1, ks, "every")
	if err != nil {
		t.Fatal(err)
	}
	t2, err := tablev2.Describe(ctx, s2, ks, "every")
	if err != nil {
		t.Fatal(err)
	}
	if t1.CassandraVersion() != t2.CassandraVersion() || t2.CassandraVersion() == "" {
		t.Fatalf("versions %q %q", t1.CassandraVersion(), t2.CassandraVersion())
	}
	var names []string
	for i, c := range t2.Columns() {
		c1 := t1.Columns()[i]
		if c.Name != c1.Name || c.Role != c1.Role || c.Collection != c1.Collection || c.Marker() != c1.Marker() || c.CQLType != c1.CQLType {
			t.Fatalf("column %d: v2 %+v, v1 %+v", i, c, c1)
		}
		names = append(names, c.Name)
	}
	for _, u := range []table.Using{0, table.UsingTTL, table.UsingTimestamp, table.UsingTTL | table.UsingTimestamp} {
		if t1.Insert(u) != t2.Insert(u) {
			t.Fatalf("Insert(%d): v1 %s, v2 %s", u, t1.Insert(u), t2.Insert(u))
		}
	}
	sel1, err1 := t1.SelectByKey(table.CellValue|table.CellWriteTime|table.CellTTL, names...)
	sel2, err2 := t2.SelectByKey(table.CellValue|table.CellWriteTime|table.CellTTL, names...)
	if err1 != nil || err2 != nil || sel1 != sel2 || t1.DeleteRow() != t2.DeleteRow() || t1.CountRange() != t2.CountRange() {
		t.Fatalf("statements differ:\n%s %v\n%s %v", sel1, err1, sel2, err2)
	}

	addr := map[string]any{"street": "Main", "No": 7}
	row := func(id int, b []byte) map[string]any {
		return map[string]any{"id": id, "b": b, "ck": []any{1, "x"}, "st": "static",
			"l": []int{1, 2}, "s": []string{"a", "b"}, "m": map[string]int{"k": 1}, "fl": []int{3, 4},
			"o": addr, "fo": addr, "lo": []map[string]any{addr, addr}, "tp": []any{5, nil}, "v": []float32{1, 2, 3},
			"ts": time.UnixMilli(1_700_000_000_123).UTC(), "dec": inf.NewDec(12345, 2), "n": int64(1) << 40,
			"d": time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)}
	}
	const stamp = int64(1_800_000_000_000_000)
	// Through v2: id 1, with the v2 driver's own types where they differ.
	r2 := row(1, []byte{})
	r2["u"], r2["ip"], r2["vi"] = gocql.MustRandomUUID(), "10.0.0.1", 42
	r2["du"] = gocql.Duration{Months: 1, Days: 2, Nanoseconds: 3}
	v2vals, err := t2.Values(r2)
	if err != nil {
		t.Fatal(err)
	}
	cql, args, err := t2.InsertRow(table.UsingTimestamp, v2vals)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(cql, append(args, stamp)...).ExecContext(ctx); err != nil {
		t.Fatalf("v2 insert: %v", err)
	}
	// Through v1: id 2, the same values.
	r1 := row(2, []byte{})
	r1["u"], r1["ip"], r1["vi"] = gocqlv1.UUID(r2["u"].(gocql.UUID)), "10.0.0.1", 42
	r1["du"] = gocqlv1.Duration{Months: 1, Days: 2, Nanoseconds: 3}
	v1vals, err := t1.Values(r1)
	if err != nil {
		t.Fatal(err)
	}
	cql1, args1, err := t1.InsertRow(table.UsingTimestamp, v1vals)
	if err != nil {
		t.Fatal(err)
	}
	if cql1 != cql {
		t.Fatalf("InsertRow: v1 %s, v2 %s", cql1, cql)
	}
	if err := s1.Query(cql1, append(args1, stamp)...).Exec(); err != nil {
		t.Fatalf("v1 insert: %v", err)
	}
	read := func(id int) (string, int64) {
		var js string
		var wt int64
		if err := s1.Query(`SELECT JSON st, l, s, m, fl, o, fo, lo, tp, v, ts, u, dec, vi, ip, d, du, n FROM every WHERE id = ? AND b = ?`, id, []byte{}).Scan(&js); err != nil {
			t.Fatal(err)
		}
		if err := s1.Query(`SELECT WRITETIME(n) FROM every WHERE id = ? AND b = ?`, id, []byte{}).Scan(&wt); err != nil {
			t.Fatal(err)
		}
		return js, wt
	}
	js2, wt2 := read(1)
	js1, wt1 := read(2)
	if js1 != js2 || wt1 != stamp || wt2 != stamp {
		t.Fatalf("read back:\nv2 %s at %d\nv1 %s at %d (want equal, at %d)", js2, wt2, js1, wt1, stamp)
	}
	for _, want := range []string{`"l": [1, 2]`, `"lo": [{"street": "Main", "\"No\"": 7}, {"street": "Main", "\"No\"": 7}]`, `"tp": [5, null]`, `"v": [1.0, 2.0, 3.0]`, `"dec": 123.45`, `"du": "1mo2d3ns"`} {
		if !strings.Contains(js2, want) {
			t.Fatalf("v2 row %s lacks %s", js2, want)
		}
	}

	// Keys: the same bytes from both, and each decodes the other's.
	k1, err := t1.KeyValues(r1)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := t2.KeyValues(r2)
	if err != nil {
		t.Fatal(err)
	}
	k1[0] = 1
	e1, err1 := t1.EncodeKey(k1)
	e2, err2 := t2.EncodeKey(k2)
	if err1 != nil || err2 != nil || string(e1) != string(e2) {
		t.Fatalf("EncodeKey: v1 %x %v, v2 %x %v", e1, err1, e2, err2)
	}
	d2, err := t2.DecodeKey(e1)
	if err != nil || fmt.Sprint(d2) != "[1 [] [1 x]]" {
		t.Fatalf("v2 DecodeKey of v1's key: %v %v", d2, err)
	}
	if back, err := t2.EncodeKey(d2); err != nil || string(back) != string(e1) {
		t.Fatalf("v2 re-encodes %x %v, want %x (an empty blob stays a value)", back, err, e1)
	}
	// Deleting by the decoded key (KeyArgs splits the tuple) removes the row.
	kargs, err := t2.KeyArgs(d2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(t2.DeleteRow(), append([]any{stamp + 1}, kargs...)...).ExecContext(ctx); err != nil {
		t.Fatal(err)
	}
	if js, _ := func() (string, error) {
		var n int
		err := s1.Query(`SELECT COUNT(*) FROM every WHERE id = 1 AND b = ? AND ck = (1, 'x')`, []byte{}).Scan(&n)
		return fmt.Sprint(n), err
	}(); js != "0" {
		t.Fatalf("row after DeleteRow by a decoded key: %s", js)
	}

	// Nil collections through pointers: UNSET, what Cassandra holds is kept.
	var nilList []int
	var nilMap map[string]int
	vals, err := t2.Values(map[string]any{"id": 2, "b": []byte{}, "ck": []any{1, "x"}, "l": &nilList, "m": &nilMap, "n": int64(9)})
	if err != nil {
		t.Fatal(err)
	}
	cql, args, err = t2.InsertRow(table.UsingTimestamp, vals)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Query(cql, append(args, stamp+2)...).ExecContext(ctx); err != nil {
		t.Fatal(err)
	}
	var l []int
	var m map[string]int
	var n int64
	if err := s1.Query(`SELECT l, m, n FROM every WHERE id = 2 AND b = ? AND ck = (1, 'x')`, []byte{}).Scan(&l, &m, &n); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(l, m, n) != "[1 2] map[k:1] 9" {
		t.Fatalf("after an upsert with nil collections: l=%v m=%v n=%d (want the collections kept)", l, m, n)
	}

	// Bad input is refused before anything is sent.
	if _, err := t2.Values(map[string]any{"id": 3, "b": []byte{}, "ck": []any{1, "x"}, "n": "not a number"}); err == nil || !strings.Contains(err.Error(), `column "n"`) {
		t.Fatalf("a string for bigint: %v", err)
	}
	if _, err := tablev2.Describe(ctx, s2, ks, "nope"); err == nil {
		t.Fatal("an unknown table described")
	}
}
