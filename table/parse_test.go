package table

import (
	"fmt"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// typeParser is the parse of a type text and its mapping to gocql's TypeInfo, as
// Describe does them.
type typeParser struct {
	keyspace string
	udts     map[string]cqltype.UserType
}

func (p *typeParser) parse(s string) (gocql.TypeInfo, error) {
	t, err := (&cqltype.Parser{Keyspace: p.keyspace, UDTs: p.udts}).Parse(s)
	if err != nil {
		return nil, err
	}
	return driver{}.TypeOf(t), nil
}

// TestTableParseType: CQL type texts as system_schema holds them become TypeInfos that
// gocql marshals: UDTs (quoted names, nested, in collections), tuples, vectors.
func TestTableParseType(t *testing.T) {
	p := &typeParser{keyspace: "ks", udts: map[string]cqltype.UserType{
		"ua":    {Fields: []string{"a", "B"}, Types: []string{"int", "frozen<list<text>>"}},
		"Outer": {Fields: []string{"in"}, Types: []string{"frozen<ua>"}},
	}}
	for in, want := range map[string]string{
		"int":                                   "int",
		"frozen<list<frozen<ua>>>":              "list(ks.ua{a=int,B=list(text)})",
		`map<text, frozen<"Outer">>`:            "map(text, ks.Outer{in=ks.ua{a=int,B=list(text)}})",
		"tuple<int, frozen<tuple<text, blob>>>": "tuple(int, tuple(text, blob))",
		"vector<float, 3>":                      "vector<float, 3>",
	} {
		ti, err := p.parse(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := fmt.Sprint(ti); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	ti, _ := p.parse(`frozen<"Outer">`)
	b, err := driver{}.Marshal(ti, map[string]any{"in": map[string]any{"a": 1, "B": []string{"x"}}})
	if err != nil || len(b) == 0 {
		t.Fatalf("marshal nested UDT: %x %v", b, err)
	}
	if u := ti.(gocql.UDTTypeInfo); u.Name != "Outer" || u.Elements[0].Type.(gocql.UDTTypeInfo).Elements[1].Name != "B" {
		t.Fatalf("%#v", u)
	}
	// The parser's own cases are internal/core/cqltype's; here, that its errors come through.
	if _, err := p.parse("frozen<ua"); err == nil {
		t.Error(`"frozen<ua" parsed`)
	}
}

// TestTableTupleArgs: a tuple column is a literal of element markers; Args splits
// slices, structs and serialised tuples into elements.
func TestTableTupleArgs(t *testing.T) {
	intT := cqlvalue.NativeType(protoVersion, gocql.TypeInt, "")
	text := cqlvalue.NativeType(protoVersion, gocql.TypeVarchar, "")
	tt := gocql.TupleTypeInfo{NativeType: cqlvalue.NativeType(protoVersion, gocql.TypeTuple, ""), Elems: []gocql.TypeInfo{intT, text}}
	cols := map[string]*gocql.ColumnMetadata{
		"id": cqlvalue.Column("id", gocql.ColumnPartitionKey, "int", intT),
		"c":  cqlvalue.Column("c", gocql.ColumnClusteringKey, "frozen<tuple<int, text>>", tt),
		"tp": cqlvalue.Column("tp", gocql.ColumnRegular, "tuple<int, text>", tt),
		"n":  cqlvalue.Column("n", gocql.ColumnRegular, "int", intT),
	}
	tbl, err := FromMetadata(&gocql.TableMetadata{Keyspace: "ks", Name: "t", Columns: cols,
		PartitionKey: []*gocql.ColumnMetadata{cols["id"]}, ClusteringColumns: []*gocql.ColumnMetadata{cols["c"]}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tbl.DeleteRow(); got != `DELETE FROM "ks"."t" USING TIMESTAMP ? WHERE "id" = ? AND "c" = (?, ?)` {
		t.Fatal(got)
	}
	vals, err := tbl.Values(map[string]any{"id": 1, "c": struct {
		N int
		S string
	}{2, "x"}, "n": 3})
	if err != nil {
		t.Fatal(err)
	}
	ins, args, err := tbl.InsertRow(UsingTimestamp, vals)
	if err != nil || ins != `INSERT INTO "ks"."t" ("id", "c", "n") VALUES (?, (?, ?), ?) USING TIMESTAMP ?` || fmt.Sprint(args) != "[1 2 x 3]" {
		t.Fatalf("%s %v %v", ins, args, err)
	}
	ins, _, err = tbl.InsertRow(0, vals[:3:3])
	if err == nil {
		t.Fatalf("short values accepted: %s", ins)
	}
	vals2, _ := tbl.Values(map[string]any{"id": 1, "c": []any{2, "x"}, "tp": []any{4, nil}})
	ins, args, err = tbl.InsertRow(0, vals2)
	if err != nil || ins != `INSERT INTO "ks"."t" ("id", "c", "n", "tp") VALUES (?, (?, ?), ?, (?, ?))` || fmt.Sprint(args) != "[1 2 x "+fmt.Sprint(gocql.UnsetValue)+" 4 <nil>]" { // a NULL scalar element stays nil (the outbox records it)
		t.Fatalf("%s %v %v", ins, args, err)
	}
	key, err := tbl.KeyArgs([]any{1, []byte{0, 0, 0, 1, 7, 0, 0, 0, 0}})
	if err == nil {
		t.Fatalf("a []byte is not a tuple: %v", key)
	}
}
