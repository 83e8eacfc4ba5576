package table

import (
	"errors"
	"fmt"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
)

func meta() *gocql.TableMetadata {
	col := func(name string, kind gocql.ColumnKind, validator string) *gocql.ColumnMetadata {
		return &gocql.ColumnMetadata{Name: name, Kind: kind, Validator: validator}
	}
	cols := map[string]*gocql.ColumnMetadata{
		"id":  col("id", gocql.ColumnPartitionKey, "int"),
		"b":   col("b", gocql.ColumnPartitionKey, "blob"),
		"ck":  col("ck", gocql.ColumnClusteringKey, "frozen<tuple<int, text>>"),
		"st":  col("st", gocql.ColumnStatic, "text"),
		"l":   col("l", gocql.ColumnRegular, "list<int>"),
		"m":   col("m", gocql.ColumnRegular, "map<text, frozen<list<int>>>"),
		"fs":  col("fs", gocql.ColumnRegular, "frozen<set<uuid>>"),
		"o":   col("o", gocql.ColumnRegular, "addr"),
		"v":   col("v", gocql.ColumnRegular, "vector<float, 3>"),
		"tp":  col("tp", gocql.ColumnRegular, "tuple<int, frozen<tuple<text, blob>>>"),
		"u":   col("u", gocql.ColumnRegular, "uuid"),
		"big": col("big", gocql.ColumnRegular, "bigint"),
	}
	return &gocql.TableMetadata{Keyspace: "ks", Name: "t", Columns: cols,
		PartitionKey:      []*gocql.ColumnMetadata{cols["id"], cols["b"]},
		ClusteringColumns: []*gocql.ColumnMetadata{cols["ck"]}}
}

func mustTable(t testing.TB) *Table {
	t.Helper()
	tbl, err := fromMetadata(meta(), map[string]cqltype.UserType{"addr": {Fields: []string{"street", "No"}, Types: []string{"text", "int"}}}, "5.0.9")
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestTableV2Types: every column's type text becomes a v2 TypeInfo the driver marshals —
// collections of collections, a UDT (the driver's own metadata cannot), a vector, nested
// tuples — and Values checks values against it before anything is sent.
func TestTableV2Types(t *testing.T) {
	tbl := mustTable(t)
	u := gocql.MustRandomUUID()
	vals, err := tbl.Values(map[string]any{"id": 1, "b": []byte{}, "ck": []any{2, "x"}, "st": "s",
		"l": []int{1}, "m": map[string][]int{"k": {1, 2}}, "fs": []gocql.UUID{u}, "o": map[string]any{"street": "a", "No": 1},
		"v": []float32{1, 2, 3}, "tp": []any{1, []any{"t", []byte{1}}}, "u": u, "big": int64(7)})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range tbl.Columns() {
		if _, err := gocql.Marshal(c.Type, vals[i]); err != nil && c.Marker() == "?" {
			t.Errorf("%s (%s): the driver cannot marshal %T: %v", c.Name, c.CQLType, vals[i], err)
		}
	}
	if c, _ := tbl.Column("o"); !c.Collection {
		t.Error("a non-frozen UDT is multi-cell")
	}
	if c, _ := tbl.Column("fs"); c.Collection {
		t.Error("a frozen set is one cell")
	}
	ins, args, err := tbl.InsertRow(0, vals)
	if err != nil || len(args) != len(vals)+1+2 {
		t.Fatalf("%s %d args %v", ins, len(args), err)
	}
	for name, bad := range map[string]any{"big": "x", "v": []float32{1}, "l": []string{"a"}, "u": 3.5} {
		_, err := tbl.Values(map[string]any{"id": 1, "b": []byte{}, "ck": []any{2, "x"}, name: bad})
		if !errors.Is(err, ErrBadValue) {
			t.Errorf("%s = %#v: %v, want ErrBadValue", name, bad, err)
		}
	}
	if _, err := tbl.Values(map[string]any{"id": 1, "ck": []any{2, "x"}}); !errors.Is(err, ErrMissingKey) {
		t.Errorf("missing blob key: %v", err)
	}
}

// TestTableV2Keys: a key round-trips (an empty blob stays a value), and corrupt bytes
// are ErrBadValue, never a panic or a huge allocation.
func TestTableV2Keys(t *testing.T) {
	tbl := mustTable(t)
	k, err := tbl.KeyValues(map[string]any{"id": 1, "b": []byte{}, "ck": []any{2, "x"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := tbl.EncodeKey(k)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tbl.DecodeKey(e)
	if err != nil || fmt.Sprint(d) != "[1 [] [2 x]]" || d[1] == nil {
		t.Fatalf("%#v %v", d, err)
	}
	if again, err := tbl.EncodeKey(d); err != nil || string(again) != string(e) {
		t.Fatalf("%x %v, want %x", again, err, e)
	}
	for i := range e {
		if _, err := tbl.DecodeKey(e[:i]); !errors.Is(err, ErrBadValue) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	bad := append([]byte(nil), e...)
	bad[len(bad)-1] ^= 0xff
	_, _ = tbl.DecodeKey(bad)
	huge := []byte{0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 8, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	if _, err := tbl.DecodeKey(huge); !errors.Is(err, ErrBadValue) {
		t.Fatalf("huge tuple length: %v", err)
	}
}

func FuzzTableV2DecodeKey(f *testing.F) {
	tbl := mustTable(f)
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := tbl.DecodeKey(b); err == nil {
			if _, err := tbl.EncodeKey(d); err != nil {
				t.Fatalf("decoded %v does not encode: %v", d, err)
			}
		}
	})
}
