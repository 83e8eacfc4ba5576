package verdict

import "testing"

func TestColumnKindOfType(t *testing.T) {
	for typ, want := range map[string]ColumnKind{
		"list<int>":                  ColumnList,
		"list<frozen<address>>":      ColumnList,
		" LIST < frozen<\"Addr\">>":  ColumnList,
		"set<frozen<address>>":       ColumnSet,
		"map<text, frozen<address>>": ColumnMap,
		"frozen<list<int>>":          ColumnScalar,
		"frozen<address>":            ColumnScalar,
		"address":                    ColumnScalar,
		"tuple<int, text>":           ColumnScalar,
		"vector<float, 3>":           ColumnScalar,
		"counter":                    ColumnCounter,
		"text":                       ColumnScalar,
		"":                           ColumnUnknown,
	} {
		if got := ColumnKindOfType(typ); got != want {
			t.Errorf("ColumnKindOfType(%q) = %v, want %v", typ, got, want)
		}
	}
}
