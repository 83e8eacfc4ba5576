package verdict

// A schema without ListColumns judges each INSERT JSON key by its column's kind. These
// cases check it stays sound: it never calls a document that writes list elements
// repeatable.

import (
	"slices"
	"testing"
)

// kindsOnly answers ColumnKind for ks.users only (no ListColumns).
type kindsOnly map[string]ColumnKind

func (k kindsOnly) ColumnKind(keyspace, table, column string) ColumnKind {
	if keyspace != "ks" || table != "users" {
		return ColumnUnknown
	}
	return k[column]
}

type jsonValues struct{}

func (jsonValues) IsUnset(any) bool        { return false }
func (jsonValues) MayMarshalList(any) bool { return false }

func TestVerdictJSONKindSound(t *testing.T) {
	schema := kindsOnly{"id": ColumnScalar, "tags": ColumnList, "Tags": ColumnScalar, "names": ColumnSet,
		"m": ColumnMap, "ft": ColumnScalar, "Up": ColumnList}
	for _, tc := range []struct {
		ks, table, doc string
		want           bool // idempotent
	}{
		{"", "ks.users", `{"id":"a","tags":["x"]}`, false},
		{"", "ks.users", `{"id":"a","TAGS":["x"]}`, false},      // unquoted: lower-cased
		{"", "ks.users", `{"id":"a","\"tags\"":["x"]}`, false},  // quoted, same column
		{"", "ks.users", `{"id":"a","\"Tags\"":["x"]}`, true},   // the case-sensitive scalar "Tags"
		{"", "ks.users", `{"id":"a","\"Up\"":["x"]}`, false},    // case-sensitive list
		{"", "ks.users", `{"id":"a","up":["x"]}`, false},        // "up" unknown: conservative
		{"", "ks.users", `{"id":"a","Up":["x"]}`, false},        // unquoted Up is "up": unknown
		{"", "ks.users", `{"id":"a","t\u0061gs":["x"]}`, false}, // JSON escape
		{"", "ks.users", `{"id":"a","tags":"[\"x\"]"}`, false},  // fromJson takes a string
		{"", "ks.users", `{"id":"a","tags":"x"}`, false},
		{"", "ks.users", `{"id":"a","tags":[]}`, true},
		{"", "ks.users", `{"id":"a","tags":""}`, true},
		{"", "ks.users", `{"id":"a","names":["x"],"m":{"k":1},"ft":["y"]}`, true},
		{"", "ks.users", `{"id":"a","other":["x"]}`, false}, // a column kind does not know
		{"", "ks.users", `[1]`, false},                      // not an object
		{"ks", "users", `{"id":"a","tags":["x"]}`, false},   // keyspace from the session
		{"ks", "users", `{"id":"a","names":["x"]}`, true},
		{"other", "users", `{"id":"a","names":["x"]}`, false}, // another keyspace: unknown
		{"ks", "other.users", `{"id":"a","names":["x"]}`, false},
		{"", "users", `{"id":"a","names":["x"]}`, false}, // no keyspace at all: unknown
	} {
		lit := ClassifyIn(tc.ks, "INSERT INTO "+tc.table+" JSON '"+tc.doc+"'", schema)
		if lit.Idempotent != tc.want {
			t.Errorf("literal %s in %q: idempotent %v, want %v (%v)", tc.doc, tc.ks, lit.Idempotent, tc.want, lit.Reasons)
		}
		bound := ClassifyIn(tc.ks, "INSERT INTO "+tc.table+" JSON ?", schema).ForValues([]any{tc.doc}, jsonValues{})
		if bound.Idempotent != tc.want {
			t.Errorf("bound %s in %q: idempotent %v, want %v (%v)", tc.doc, tc.ks, bound.Idempotent, tc.want, bound.Reasons)
		}
	}
}

// TestVerdictJSONConsulted: the JSON judgement now records the keyspace it consulted for
// any schema (before: only when ListColumns answered), so a Versioned schema's verdict for
// a table it did not know is judged again once it learns the table. (Behaviour change;
// the keyspace may be listed twice.)
func TestVerdictJSONConsulted(t *testing.T) {
	v := ClassifyIn("ks", "BEGIN BATCH INSERT INTO users JSON ?; INSERT INTO users JSON ? APPLY BATCH", kindsOnly{})
	if !slices.Contains(v.Consulted(), "ks") {
		t.Errorf("consulted %v, want ks", v.Consulted())
	}
	t.Logf("consulted %v", v.Consulted())
}
