package retry

import (
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

type mapSchema map[string]ColumnKind

func (m mapSchema) ColumnKind(ks, table, col string) ColumnKind { return m[table+"."+col] }

func TestRetryClassify(t *testing.T) {
	for _, tc := range []struct {
		cql    string
		want   bool
		kind   Kind
		reason string // substring of a reason when not idempotent
	}{
		// Reads.
		{cql: "SELECT * FROM t WHERE id = ?", want: true, kind: KindRead},
		{cql: "select now() from system.local", want: true, kind: KindRead},
		{cql: "  SELECT a FROM t -- trailing comment", want: true, kind: KindRead},
		// Plain writes.
		{cql: "INSERT INTO t (id, a) VALUES (?, ?)", want: true, kind: KindWrite},
		{cql: "INSERT INTO ks.t (id, a) VALUES (?, ?) USING TTL 60", want: true, kind: KindWrite},
		{cql: "INSERT INTO t (id, a) VALUES (?, ?) USING TIMESTAMP ?", want: true, kind: KindWrite},
		{cql: `INSERT INTO "MyKs"."T" ("Id", "if") VALUES (:id, :x)`, want: true, kind: KindWrite},
		{cql: "INSERT INTO t JSON ?", want: true, kind: KindWrite},
		{cql: "UPDATE t SET a = ?, b = ? WHERE id = ?", want: true, kind: KindWrite},
		{cql: "UPDATE t USING TTL 5 SET a = 'x' WHERE id = 1", want: true, kind: KindWrite},
		{cql: "DELETE FROM t WHERE id = ?", want: true, kind: KindWrite},
		{cql: "DELETE a, b FROM t WHERE id = ? AND c IN (?, ?)", want: true, kind: KindWrite},
		{cql: "UPDATE t SET m['k'] = ? WHERE id = ?", want: true}, // a text key: a map
		{cql: "UPDATE t SET m[?] = ? WHERE id = ?", reason: "positional list set"},
		{cql: "UPDATE t SET l[2] = 'x' WHERE id = 1", reason: "positional list set"},
		{cql: "UPDATE t SET u.f = ? WHERE id = 1", want: true},
		{cql: "DELETE m['k'] FROM t WHERE id = ?", want: true}, // a text key cannot index a list
		// Whole-list assignment of what may be a non-frozen list (no schema).
		{cql: "UPDATE t SET l = [1, 2] WHERE id = 1", reason: "may be a non-frozen list"},
		{cql: "UPDATE t USING TIMESTAMP 1000 SET l = ['a'] WHERE id = 1", reason: "may be a non-frozen list"},
		{cql: "INSERT INTO t (id, l) VALUES (1, [7, 8])", reason: "may be a non-frozen list"},
		{cql: "UPDATE t SET l = [] WHERE id = 1", want: true}, // writes no element
		{cql: "INSERT INTO t (id, s) VALUES (1, {7, 8})", want: true},
		{cql: `INSERT INTO t JSON '{"id": 1, "l": [1, 2]}'`, reason: "INSERT JSON"},
		{cql: `INSERT INTO t JSON '{"id": 1, "v": "x"}'`, want: true},
		{cql: "UPDATE t SET s = s + {'a'} WHERE id = 1", want: true},
		{cql: "UPDATE t SET m = m + {'k': 'v'} WHERE id = 1", want: true},
		{cql: "UPDATE t SET s = s - {'a'} WHERE id = 1", want: true},
		{cql: "UPDATE t SET l = l - ['a'] WHERE id = 1", reason: "list element removal"},
		{cql: "UPDATE t SET a = b + ? WHERE id = 1", want: true}, // not self-referencing: not CQL-valid but not an accumulator
		{cql: "INSERT INTO t (id, ts) VALUES (?, toTimestamp(?))", want: true},
		{cql: "INSERT INTO t (id, b) VALUES (?, textAsBlob(?))", want: true},
		{cql: "UPDATE t SET a = ? WHERE token(id) > ?", want: true},
		{cql: "INSERT INTO t (id, a) VALUES (?, 'now()')", want: true}, // string literal, not a call
		{cql: "INSERT INTO t (id, a) VALUES (?, $$uuid()$$)", want: true},
		{cql: "INSERT INTO t (id, a) VALUES (?, ?) /* now() */", want: true},
		{cql: "INSERT INTO t (id, a) VALUES (?, 'it''s; uuid()')", want: true},
		// Accumulators.
		{cql: "UPDATE c SET n = n + 1 WHERE id = ?", reason: "counter update"},
		{cql: "UPDATE c SET n = n + ? WHERE id = ?", reason: "counter or list"},
		{cql: "update c set n = n - ? where id = ?", reason: "counter or list"},
		{cql: `UPDATE c SET "N" = "N" + ? WHERE id = ?`, reason: "counter or list"},
		{cql: "UPDATE t SET l = l + ['x'] WHERE id = 1", reason: "list append"},
		{cql: "UPDATE t SET l = ['x'] + l WHERE id = 1", reason: "list prepend"},
		{cql: "UPDATE t SET l = ? + l WHERE id = 1", reason: "list prepend"},
		{cql: "DELETE l[?] FROM t WHERE id = ?", reason: "element delete"},
		{cql: "DELETE l[0], a FROM t WHERE id = ?", reason: "positional list delete"[9:]},
		// Server-side non-determinism.
		{cql: "INSERT INTO t (id, a) VALUES (now(), ?)", reason: "now()"},
		{cql: "INSERT INTO t (id, a) VALUES (uuid(), ?)", reason: "uuid()"},
		{cql: "INSERT INTO t (id, ts) VALUES (?, toTimestamp(now()))", reason: "now()"},
		{cql: "INSERT INTO t (id, ts) VALUES (?, currentTimestamp())", reason: "currentTimestamp()"},
		{cql: "UPDATE t SET d = currentDate() WHERE id = ?", reason: "currentDate()"},
		{cql: "INSERT INTO t (id, a) VALUES (?, ks.myfn(?))", reason: "user-defined function"},
		{cql: "INSERT INTO t (id, a) VALUES (?, myfn(?))", reason: "unknown function"},
		{cql: "DELETE FROM t WHERE id = currentTimestamp()", reason: "currentTimestamp()"},
		{cql: "DELETE FROM t WHERE id = now()", want: false, kind: KindWrite}, // a fresh id, once only if id is the partition key or the whole clustering key: no schema says so
		// LWT.
		{cql: "INSERT INTO t (id) VALUES (?) IF NOT EXISTS", reason: "lightweight transaction"},
		{cql: "UPDATE t SET a = ? WHERE id = ? IF a = ?", reason: "lightweight transaction"},
		{cql: "UPDATE t SET a = ? WHERE id = ? IF EXISTS", reason: "lightweight transaction"},
		{cql: "DELETE FROM t WHERE id = ? IF EXISTS", reason: "lightweight transaction"},
		// Batches.
		{cql: "BEGIN UNLOGGED BATCH INSERT INTO a (id) VALUES (?); INSERT INTO b (id) VALUES (?); APPLY BATCH", want: true, kind: KindBatch},
		{cql: "BEGIN BATCH USING TIMESTAMP 5 INSERT INTO a (id) VALUES (?) DELETE FROM b WHERE id = ? APPLY BATCH", want: true, kind: KindBatch},
		{cql: "BEGIN BATCH INSERT INTO a (id) VALUES (?); UPDATE c SET n = n + 1 WHERE id = ?; APPLY BATCH", reason: "counter update", kind: KindBatch},
		{cql: "BEGIN COUNTER BATCH UPDATE c SET n = n + ? WHERE id = ?; APPLY BATCH", reason: "COUNTER batch"},
		{cql: "begin batch insert into a (id, t) values (?, now()) apply batch", reason: "now()"},
		{cql: "BEGIN BATCH INSERT INTO a (id) VALUES (?)", reason: "APPLY BATCH"},
		{cql: "INSERT INTO a (id) VALUES (?); INSERT INTO b (id) VALUES (?)", want: true, kind: KindBatch},
		// Other statements.
		{cql: "TRUNCATE t", reason: "TRUNCATE"},
		{cql: "CREATE TABLE IF NOT EXISTS t (id int PRIMARY KEY)", want: true, kind: KindSchema},
		{cql: "CREATE TABLE t (id int PRIMARY KEY)", reason: "IF [NOT] EXISTS"},
		{cql: "DROP TABLE IF EXISTS t", want: true, kind: KindSchema},
		{cql: "ALTER TABLE t WITH gc_grace_seconds = 3600", want: true, kind: KindSchema},
		{cql: "ALTER TABLE t ADD c int", reason: "ADD"},
		{cql: "ALTER TABLE IF EXISTS t DROP c", reason: "DROP"},
		{cql: "ALTER TABLE t DROP IF EXISTS c", want: true, kind: KindSchema},
		{cql: "ALTER TABLE t ADD IF NOT EXISTS c int", want: true, kind: KindSchema},
		{cql: "ALTER TABLE IF EXISTS t ADD c int", reason: "ADD"},
		{cql: "USE ks", want: true},
		// Not CQL.
		{cql: "", reason: "empty"},
		{cql: "   ;; -- nothing", reason: "empty"},
		{cql: "INSERT INTO t (a) VALUES ('unterminated", reason: "not CQL"},
		{cql: "SELECT * FROM t /* open", reason: "not CQL"},
		{cql: "FROBNICATE t", reason: "unrecognised"},
		{cql: "SELECT # FROM t", reason: "not CQL"},
	} {
		v := Classify(tc.cql)
		if v.Idempotent != tc.want {
			t.Errorf("Classify(%q).Idempotent = %v, want %v (reasons %q)", tc.cql, v.Idempotent, tc.want, v.Reasons)
			continue
		}
		if tc.kind != KindUnknown && v.Kind != tc.kind {
			t.Errorf("Classify(%q).Kind = %v, want %v", tc.cql, v.Kind, tc.kind)
		}
		if !tc.want && !strings.Contains(strings.Join(v.Reasons, "\n"), tc.reason) {
			t.Errorf("Classify(%q) reasons %q, want one mentioning %q", tc.cql, v.Reasons, tc.reason)
		}
		if tc.want && len(v.Reasons) != 0 {
			t.Errorf("Classify(%q) idempotent but gives reasons %q", tc.cql, v.Reasons)
		}
	}
}

func TestRetryClassifyWithSchema(t *testing.T) {
	schema := mapSchema{"t.s": ColumnSet, "t.m": ColumnMap, "t.l": ColumnList, "c.n": ColumnCounter, "t.fl": ColumnScalar}
	for _, tc := range []struct {
		cql  string
		want bool
	}{
		{"UPDATE t SET s = s + ? WHERE id = ?", true},
		{"UPDATE t SET m = m + ? WHERE id = ?", true},
		{"UPDATE ks.t SET m = m - ? WHERE id = ?", true},
		{"UPDATE t SET l = l + ? WHERE id = ?", false},
		{"UPDATE t SET l = l - ? WHERE id = ?", false}, // removal races another writer's add
		{"UPDATE c SET n = n + ? WHERE id = ?", false},
		{"UPDATE c SET n = n - ? WHERE id = ?", false},
		{"DELETE m[?] FROM t WHERE id = ?", true},
		{"DELETE l[?] FROM t WHERE id = ?", false},
		{"UPDATE t SET x = x + ? WHERE id = ?", false}, // unknown column: conservative
		{"UPDATE t SET l = [1, 2] WHERE id = ?", false},
		{"UPDATE t SET fl = [1, 2] WHERE id = ?", true}, // frozen list: one cell
		{"INSERT INTO t (id, fl) VALUES (?, [1])", true},
		{"INSERT INTO t (id, l) VALUES (?, [1])", false},
		{"UPDATE t SET l[0] = ? WHERE id = ?", false},
		{"UPDATE t SET m[?] = ? WHERE id = ?", true},
	} {
		if v := ClassifyWithSchema(tc.cql, schema); v.Idempotent != tc.want {
			t.Errorf("ClassifyWithSchema(%q) = %v (%q), want %v", tc.cql, v.Idempotent, v.Reasons, tc.want)
		}
	}
}

// TestRetryRepeatableValues: bind markers are judged by the value bound and the column's
// type — a non-empty list bound whole to a non-frozen list is not repeatable.
func TestRetryRepeatableValues(t *testing.T) {
	withSchema := NewPolicy(WithSchema(mapSchema{"t.l": ColumnList, "t.fl": ColumnScalar, "t.s": ColumnSet}))
	noSchema := NewPolicy()
	var nilPtr *[]int
	for _, tc := range []struct {
		p      *Policy
		cql    string
		values []any
		want   bool
	}{
		{withSchema, "UPDATE t SET l = ? WHERE id = ?", []any{[]int{1}, 1}, false},
		{withSchema, "UPDATE t SET l = ? WHERE id = ?", []any{[]int{}, 1}, true},
		{withSchema, "UPDATE t SET l = ? WHERE id = ?", []any{nil, 1}, true},
		{withSchema, "UPDATE t SET l = ? WHERE id = ?", []any{nilPtr, 1}, true},
		{withSchema, "UPDATE t SET l = ? WHERE id = ?", []any{gocql.UnsetValue, 1}, true},
		{withSchema, "UPDATE t USING TTL ? SET l = ? WHERE id = ?", []any{5, []int{1}, 1}, false},
		{withSchema, "UPDATE t SET fl = ? WHERE id = ?", []any{[]int{1}, 1}, true},
		{withSchema, "UPDATE t SET s = ? WHERE id = ?", []any{[]int{1}, 1}, true},
		{withSchema, "INSERT INTO t (id, l, s) VALUES (?, ?, ?)", []any{1, []string{"a"}, []int{1}}, false},
		{withSchema, "INSERT INTO t (id, fl, s) VALUES (?, ?, ?)", []any{1, []string{"a"}, []int{1}}, true},
		{noSchema, "INSERT INTO t (id, x) VALUES (?, ?)", []any{1, []int{1}}, false},
		{noSchema, "INSERT INTO t (id, x) VALUES (?, ?)", []any{1, []byte{1}}, false}, // may be a list<tinyint>
		{noSchema, "INSERT INTO t (id, x) VALUES (?, ?)", []any{gocql.TimeUUID(), "x"}, true},
		{noSchema, "INSERT INTO t JSON ?", []any{`{"id": 1, "l": [1]}`}, false},
		{noSchema, "INSERT INTO t JSON ?", []any{`{"id": 1, "l": []}`}, true},
		{noSchema, "BEGIN BATCH INSERT INTO a (id) VALUES (?); UPDATE t SET x = ? WHERE id = ? APPLY BATCH", []any{1, []int{1}, 2}, false},
	} {
		if got := tc.p.Repeatable("ks", tc.cql, tc.values).Idempotent; got != tc.want {
			t.Errorf("Repeatable(%q, %v) = %v, want %v", tc.cql, tc.values, got, tc.want)
		}
	}
}

func TestRetryClassifyFlags(t *testing.T) {
	v := Classify("INSERT INTO t (id) VALUES (?) IF NOT EXISTS")
	if !v.Conditional || !v.Writes || v.Statements != 1 {
		t.Fatalf("LWT flags: %+v", v)
	}
	v = Classify("SELECT * FROM t")
	if v.Writes || v.Conditional {
		t.Fatalf("read flags: %+v", v)
	}
	v = Classify("BEGIN BATCH INSERT INTO a (id) VALUES (1) INSERT INTO b (id) VALUES (2) APPLY BATCH")
	if v.Statements != 3 || !v.Writes { // the batch and its two statements
		t.Fatalf("batch flags: %+v", v)
	}
	v = Classify("INSERT INTO t (id) VALUES (1) USING TIMESTAMP 12345")
	if len(v.Notes) == 0 {
		t.Fatal("literal USING TIMESTAMP not noted")
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM t", "UPDATE c SET n = n + ? WHERE id = ?", "BEGIN BATCH APPLY BATCH",
		"INSERT INTO t (a) VALUES ('x''y', $$z$$, \"q\"\"q\", :b, 0xCAFE, 1.5e-3, -1)",
		"DELETE l[?] FROM t WHERE id = ?", "/* */ -- \n // x\n", "UPDATE t SET", "DELETE FROM",
		"BEGIN BATCH UPDATE t SET a = a + [1] WHERE k = 1; DELETE m[1] FROM t WHERE k = 1 APPLY BATCH",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := Classify(s)
		if v.Idempotent && len(v.Reasons) > 0 {
			t.Fatalf("idempotent with reasons %q", v.Reasons)
		}
		if !v.Idempotent && len(v.Reasons) == 0 {
			t.Fatal("not idempotent without a reason")
		}
		_ = ClassifyWithSchema(s, mapSchema{"t.a": ColumnList, "t.m": ColumnMap})
	})
}

func BenchmarkClassify(b *testing.B) {
	stmt := `BEGIN UNLOGGED BATCH DELETE FROM "ks"."t" USING TIMESTAMP ? WHERE id = ?; INSERT INTO "ks"."t" ("id", "a", "b", "c") VALUES (?, ?, ?, ?) USING TIMESTAMP ?; APPLY BATCH`
	b.ReportAllocs()
	for b.Loop() {
		_ = Classify(stmt)
	}
}

// listSchema says every column named l is a non-frozen list.
type listSchema struct{}

func (listSchema) ColumnKind(_, _, column string) ColumnKind {
	if column == "l" {
		return ColumnList
	}
	return ColumnScalar
}

// TestClassifyListAssignmentsNotRepeatable: whole-list assignments of a non-frozen list
// that Classify (with or without schema) calls idempotent. Each one duplicates the list
// when repeated on Cassandra 5.0.9 (see integration TestReview13InsertJSONStringEncodedList
// and TestReview13TypeHintedListMarker).
func TestRetryClassifyListAssignmentsNotRepeatable(t *testing.T) {
	for _, c := range []struct {
		name, cql string
		schema    Schema
	}{
		// fromJson takes a collection as a JSON string holding the array.
		{"json string-encoded list, no schema", `INSERT INTO t JSON '{"id": 1, "l": "[7,8]"}'`, nil},
		{"json string-encoded list, schema", `INSERT INTO t JSON '{"id": 1, "l": "[7,8]"}'`, listSchema{}},
		// A type hint in front of a literal or a bind marker.
		{"type-hinted literal, no schema", `UPDATE t SET l = (list<int>)[7, 8] WHERE id = 1`, nil},
		{"type-hinted literal, schema", `INSERT INTO t (id, l) VALUES (1, (list<int>)[7, 8])`, listSchema{}},
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
		v := ClassifyWithSchema(cql, listSchema{})
		if v.Idempotent && len(v.ValueConditions()) == 0 {
			t.Errorf("ClassifyWithSchema(%s): idempotent with no value condition: a list bound there is re-sent", cql)
		}
	}
}
