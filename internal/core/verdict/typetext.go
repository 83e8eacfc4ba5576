package verdict

import "strings"

// ColumnKindOfType is the ColumnKind of a column whose CQL type text (system_schema's
// columns.type: "list<frozen<address>>", "frozen<set<int>>", "counter") is typ: a
// non-frozen list, set or map by its outermost type whatever its elements are, a
// counter, and every other type one cell overwritten whole (ColumnScalar) — frozen
// collections, tuples, vectors, UDTs as the drivers' metadata reports them. An empty
// text is ColumnUnknown. Drivers that cannot parse a type (the Apache driver v2 does not
// know UDT names inside a collection) still give its text.
func ColumnKindOfType(typ string) ColumnKind {
	t := strings.ToLower(strings.TrimSpace(typ))
	head, _, _ := strings.Cut(t, "<")
	switch strings.TrimSpace(head) {
	case "":
		return ColumnUnknown
	case "counter":
		return ColumnCounter
	case "list":
		return ColumnList
	case "set":
		return ColumnSet
	case "map":
		return ColumnMap
	}
	return ColumnScalar
}
