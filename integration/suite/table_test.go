package suite

import (
	"context"
	"fmt"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/table"
)

// TestTablePointerToNilCollectionIsUnset: a *[]T or *map pointing to a nil slice or map
// is "no value" like the nil slice itself: Values binds UNSET and the cells Cassandra
// holds survive an upsert. gocql binds such a pointer as NULL (a cell tombstone);
// before, Values passed it through and the upsert erased the columns.
func TestTablePointerToNilCollectionIsUnset(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE ptrs (id int PRIMARY KEY, st set<int>, fl frozen<list<int>>, m map<text, int>, n int)`,
		`INSERT INTO ptrs (id, st, fl, m, n) VALUES (1, {1, 2}, [3, 4], {'a': 5}, 6)`)
	tbl, err := table.Describe(ctx, s, ks, "ptrs")
	if err != nil {
		t.Fatal(err)
	}
	var nilSet, nilList []int
	var nilMap map[string]int
	n := 7
	type row struct {
		ID int             `db:"id"`
		St *[]int          `db:"st"`
		Fl *[]int          `db:"fl"`
		M  *map[string]int `db:"m"`
		N  *int            `db:"n"`
	}
	vals, err := tbl.Values(&row{ID: 1, St: &nilSet, Fl: &nilList, M: &nilMap, N: &n})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Query(tbl.Insert(table.UsingTimestamp), append(vals, int64(1)<<60)...).Exec(); err != nil {
		t.Fatal(err)
	}
	var st, fl []int
	var m map[string]int
	var got int
	if err := s.Query(`SELECT st, fl, m, n FROM ptrs WHERE id = 1`).Scan(&st, &fl, &m, &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(st, fl, m, got) != "[1 2] [3 4] map[a:5] 7" {
		t.Fatalf("after an upsert with pointers to nil collections: st=%v fl=%v m=%v n=%d (want the old collections kept)", st, fl, m, got)
	}
}

// TestTableDescribeUserTypesAndVectors: Describe types UDT columns (nested, and inside
// collections) as gocql UDTs and vectors as cqlvalue.VectorType, so values marshal;
// gocql's schema metadata has custom() for both.
func TestTableDescribeUserTypesAndVectors(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	vectors := !before50() // vector is 5.0+
	vcol := ", v vector<float, 3>"
	if !vectors {
		vcol = ""
	}
	harness.Exec(t, s, `CREATE TYPE "Inner" (a int, "B" text)`,
		`CREATE TYPE outer_t (i frozen<"Inner">, l frozen<list<frozen<"Inner">>>)`,
		`CREATE TABLE typed (id int PRIMARY KEY, o outer_t, fo frozen<outer_t>, m map<text, frozen<outer_t>>`+vcol+`)`)
	tbl, err := table.Describe(ctx, s, ks, "typed")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"o", "fo"} {
		c, _ := tbl.Column(name)
		u, ok := c.Type.(gocql.UDTTypeInfo)
		if !ok || len(u.Elements) != 2 || u.Elements[0].Name != "i" {
			t.Fatalf("%s: %#v", name, c.Type)
		}
		in, ok := u.Elements[0].Type.(gocql.UDTTypeInfo)
		if !ok || in.Name != "Inner" || in.Elements[1].Name != "B" {
			t.Fatalf("%s.i: %#v", name, u.Elements[0].Type)
		}
	}
	if c, _ := tbl.Column("v"); vectors && fmt.Sprint(c.Type) != "vector<float, 3>" {
		t.Fatalf("v: %v", c.Type)
	}
	inner := map[string]any{"a": 1, "B": "b"}
	o := map[string]any{"i": inner, "l": []map[string]any{inner}}
	row := map[string]any{"id": 1, "o": o, "fo": o, "m": map[string]any{"k": o}}
	if vectors {
		row["v"] = []float32{1, 2, 3}
	}
	vals, err := tbl.Values(row)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Query(tbl.Insert(0), vals...).Exec(); err != nil {
		t.Fatal(err)
	}
	var json string
	if err := s.Query(`SELECT JSON o, fo, m FROM typed WHERE id = 1`).Scan(&json); err != nil {
		t.Fatal(err)
	}
	const want = `{"o": {"i": {"a": 1, "\"B\"": "b"}, "l": [{"a": 1, "\"B\"": "b"}]}, "fo": {"i": {"a": 1, "\"B\"": "b"}, "l": [{"a": 1, "\"B\"": "b"}]}, "m": {"k": {"i": {"a": 1, "\"B\"": "b"}, "l": [{"a": 1, "\"B\"": "b"}]}}}`
	if json != want {
		t.Fatalf("read back\n%s\nwant\n%s", json, want)
	}
	if !vectors {
		return
	}
	var raw rawBytes
	if err := s.Query(`SELECT v FROM typed WHERE id = 1`).Scan(&raw); err != nil || fmt.Sprintf("%x", []byte(raw)) != "3f8000004000000040400000" {
		t.Fatalf("vector bytes %x %v", []byte(raw), err)
	}
}

// rawBytes scans a value's serialised form (gocql v1.7.0 scans a vector no other way).
type rawBytes []byte

func (r *rawBytes) UnmarshalCQL(_ gocql.TypeInfo, b []byte) error {
	*r = append(rawBytes{}, b...)
	return nil
}
