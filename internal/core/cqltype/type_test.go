package cqltype

import (
	"strings"
	"testing"
)

// TestParse: type texts as system_schema holds them become trees; String writes them
// back as CQL.
func TestParse(t *testing.T) {
	p := &Parser{Keyspace: "ks", UDTs: map[string]UserType{
		"ua":    {Fields: []string{"a", "B"}, Types: []string{"int", "frozen<list<text>>"}},
		"Outer": {Fields: []string{"in"}, Types: []string{"frozen<ua>"}},
	}}
	for in, want := range map[string]string{
		"int":                                   "int",
		"TEXT":                                  "text",
		"frozen<list<frozen<ua>>>":              `frozen<list<frozen<"ks"."ua">>>`,
		`map<text, frozen<"Outer">>`:            `map<text, frozen<"ks"."Outer">>`,
		"tuple<int, frozen<tuple<text, blob>>>": "tuple<int, frozen<tuple<text, blob>>>",
		"vector<float, 3>":                      "vector<float, 3>",
		"set<frozen<map<int, varint>>>":         "set<frozen<map<int, varint>>>",
	} {
		got, err := p.Parse(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got.String() != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	outer, _ := p.Parse(`frozen<"Outer">`)
	if outer.Kind != UDT || !outer.Frozen || outer.Name != "Outer" || outer.Keyspace != "ks" ||
		outer.Params[0].Kind != UDT || outer.Params[0].Fields[1] != "B" || outer.Params[0].Params[1].Kind != List {
		t.Fatalf("%#v", outer)
	}
	for _, bad := range []string{"", "list<", "nosuch", "map<int>", "vector<float, x>", "vector<float, 0>", "frozen<ua",
		`"`, `"ua`, `list<">`, "tuple<>", "int<text>", "list<int, int>", ">", strings.Repeat("list<", 100) + "int" + strings.Repeat(">", 100)} {
		if got, err := p.Parse(bad); err == nil {
			t.Errorf("%q parsed: %s", bad, got)
		}
	}
	// A user type whose field types do not line up with its fields is unknown, not a panic.
	p.UDTs["broken"] = UserType{Fields: []string{"a", "b"}, Types: []string{"int"}}
	if _, err := p.Parse("frozen<broken>"); err == nil {
		t.Error("a user type with 2 fields and 1 type parsed")
	}
}

// FuzzParse: no text panics the parser, and a parsed type's String parses to the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"int", "frozen<list<frozen<ua>>>", `map<text, frozen<"Outer">>`, "vector<float, 3>", `"`, "tuple<int,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := &Parser{Keyspace: "ks", UDTs: map[string]UserType{"ua": {Fields: []string{"a"}, Types: []string{"int"}}}}
		got, err := p.Parse(s)
		if err != nil || got.Kind == UDT || strings.Contains(got.String(), `"`) {
			return // a UDT prints keyspace-qualified, which the parser does not read back
		}
		again, err := p.Parse(got.String())
		if err != nil || again.String() != got.String() {
			t.Fatalf("%q → %s → %s, %v", s, got, again, err)
		}
	})
}
