package retry

import "testing"

// review13Schema says every column named l is a non-frozen list.
type review13Schema struct{}

func (review13Schema) ColumnKind(_, _, column string) ColumnKind {
	if column == "l" {
		return ColumnList
	}
	return ColumnScalar
}

// TestReview13ClassifyMissesListAssignments: whole-list assignments of a non-frozen list
// that Classify (with or without schema) calls idempotent. Each one duplicates the list
// when repeated on Cassandra 5.0.9 (see integration TestReview13InsertJSONStringEncodedList
// and TestReview13TypeHintedListMarker).
func TestReview13ClassifyMissesListAssignments(t *testing.T) {
	for _, c := range []struct {
		name, cql string
		schema    Schema
	}{
		// fromJson takes a collection as a JSON string holding the array.
		{"json string-encoded list, no schema", `INSERT INTO t JSON '{"id": 1, "l": "[7,8]"}'`, nil},
		{"json string-encoded list, schema", `INSERT INTO t JSON '{"id": 1, "l": "[7,8]"}'`, review13Schema{}},
		// A type hint in front of a literal or a bind marker.
		{"type-hinted literal, no schema", `UPDATE t SET l = (list<int>)[7, 8] WHERE id = 1`, nil},
		{"type-hinted literal, schema", `INSERT INTO t (id, l) VALUES (1, (list<int>)[7, 8])`, review13Schema{}},
	} {
		if v := ClassifyWithSchema(c.cql, c.schema); v.Idempotent {
			t.Errorf("%s: ClassifyWithSchema(%s) idempotent, want not (a repeat appends a second copy)", c.name, c.cql)
		}
	}
	// A type-hinted bind marker to a known non-frozen list: the value decides, so the
	// verdict must at least carry a value condition for it.
	for _, cql := range []string{
		`INSERT INTO t (id, l) VALUES (?, (list<int>)?)`,
		`UPDATE t SET l = (list<int>)? WHERE id = ?`,
	} {
		v := ClassifyWithSchema(cql, review13Schema{})
		if v.Idempotent && len(v.ValueConditions()) == 0 {
			t.Errorf("ClassifyWithSchema(%s): idempotent with no value condition: a list bound there is re-sent", cql)
		}
	}
}
