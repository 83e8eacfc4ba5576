package verdict_test

// Found by the second adversarial review of the shadowing rule and the 'now' handling. Every case here is one the
// library must call NOT idempotent (want false), unless marked otherwise; each names the
// Cassandra behaviour that makes it so.

import (
	"encoding/json"
	"math"
	"sync"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// review extends shadowSchema: table f (k float partition key, l list), and scalar
// (timestamp) u.ts and map<timestamp, int> u.m so that no list kind hides a 'now'.
type review struct{ roles }

var reviewSchema = review{roles{kinds{"t.l": verdict.ColumnList, "t.s": verdict.ColumnList, "t.v": verdict.ColumnScalar,
	"t.m": verdict.ColumnList, "f.l": verdict.ColumnList, "u.ts": verdict.ColumnScalar, "u.m": verdict.ColumnMap,
	"u.k": verdict.ColumnScalar}}}

func (r review) ColumnRole(ks, table, col string) verdict.ColumnRole {
	if table == "f" {
		if col == "k" {
			return verdict.RolePartitionKey
		}
		return verdict.RoleRegular
	}
	return r.roles.ColumnRole(ks, table, col)
}

func (r review) KeyType(ks, table, col string) verdict.KeyType {
	if table == "f" && col == "k" {
		return verdict.KeyFloat
	}
	return r.roles.KeyType(ks, table, col)
}

// withLists is review that can list a table's non-frozen list columns, as SessionSchema
// does (verdict.ListColumner).
type withLists struct{ review }

func (withLists) ListColumns(_, table string) (map[string]bool, bool) {
	if table == "t" {
		return map[string]bool{"l": true, "s": true, "m": true}, true
	}
	return map[string]bool{}, true
}

func TestReviewSecondRound(t *testing.T) {
	b := func(stmts string) string { return "BEGIN UNLOGGED BATCH " + stmts + " APPLY BATCH" }
	sNaN, qNaN := math.Float32frombits(0x7f800001), math.Float32frombits(0x7fc00001)
	for _, tc := range []struct {
		name   string
		schema verdict.Schema
		cql    string
		values []any
	}{
		// 1. cqltext.Lex reads `:true` in a map literal written without a space ({'x':true})
		// as a named bind marker. Cassandra sees a map value and no marker, so every later
		// marker index is off by one: the rule compares the wrong bound values. Here
		// Cassandra appends to row (k='b', c=7) and deletes row (k='a', c=7); the
		// classifier reads the write as (7, "a") and the delete as (7, "a").
		{"map literal ':true' shifts marker indexes", reviewSchema,
			b("UPDATE t SET v = {'x':true} WHERE k = ? AND c = ?; UPDATE t SET l = l + [1] WHERE k = ? AND c = ?; " +
				"DELETE FROM t WHERE k = ? AND c = ?; UPDATE t SET v = {} WHERE k = ? AND c = ?"),
			[]any{"p", 0, "b", 7, "a", 7, "a", 1}},
		// 2. The same lexing hides a server function right after the colon: `:uuid` is a
		// Bind token, so functions() never sees `uuid (`. Each run writes another
		// server-generated value into m['x'] at the same timestamp (ties go to the greater
		// value), and a clustering key from now() writes a second row.
		{"{'x':uuid()} in a map literal", reviewSchema,
			"INSERT INTO t (k, c, v) VALUES ('a', 1, {'x':uuid()})", nil},
		{"{'x':now()} in an UPDATE", reviewSchema,
			"UPDATE t SET v = {'x':now()} WHERE k = 'a' AND c = 1", nil},
		{"{'x':currentTimestamp()} beside a covered append", reviewSchema,
			b("DELETE l FROM t WHERE k = 'a' AND c = 1; UPDATE t SET l = l + [1], v = {'x':currentTimestamp()} WHERE k = 'a' AND c = 1"), nil},
		// 3. Json.handleCaseSensitivity (JsonUtils in 5.0) walks the keys in document order
		// over a LinkedHashMap: `"\"K\""` is put as "K", overwriting the value of the plain
		// key "K", which is then lowered to "k". Cassandra writes k = 'b'; the footprint
		// reads k = 'a' (shadow.go footprintOf, INSERT JSON: seen[] only catches two keys
		// that fold to the same name, not a quoted key equal to another key's raw text).
		{"JSON quoted key overwrites a plain key before it is lowered", reviewSchema,
			b(`INSERT INTO t JSON '{"\"K\"": "b", "K": "a", "c": 1, "l": [1]}'; DELETE FROM t WHERE k = 'a' AND c = 1`), nil},
		// Same cause in jsonListAssignments (classify_dml.go), with a schema that lists its
		// list columns (SessionSchema does): Cassandra writes l = [1]; the verdict sees
		// "L" (no such list) = [1] and l = [].
		{"JSON quoted key hides a list (ListColumner)", withLists{reviewSchema},
			`INSERT INTO t JSON '{"k": "a", "c": 1, "\"L\"": [1], "L": []}'`, nil},
		// 4. 'now' as a JSON object KEY: MapType.fromJSONObject runs keys.fromJSONObject on
		// each key; TimestampType turns the string "now" into the server's clock. jsonHasNow
		// only looks at map values. A repeat adds a second entry to m.
		{"JSON map key \"now\" (literal document)", reviewSchema,
			`INSERT INTO u JSON '{"k": 1, "m": {"now": 1}}'`, nil},
		{"fromJson map key \"now\"", reviewSchema,
			`INSERT INTO u (k, m) VALUES (1, fromJson('{"now": 1}'))`, nil},
		// A collection given as a JSON string is decoded again (MapType/SetType/ListType
		// fromJSONObject: decodeJson on a String); jsonHasNow does not look inside strings.
		{"JSON map as a string holding \"now\"", reviewSchema,
			`INSERT INTO u JSON '{"k": 1, "m": "{\"now\": 1}"}'`, nil},
		// 5. Jackson's readValue ignores trailing tokens (FAIL_ON_TRAILING_TOKENS is off);
		// Go's json.Unmarshal rejects them, and hasNowLiteral then says "no now".
		{"fromJson with trailing text after \"now\"", reviewSchema,
			`INSERT INTO u (k, ts) VALUES (1, fromJson('"now" 1'))`, nil},
		// 6. fromJson(?) on a timestamp column: FromJsonFct decodes the bound text, and
		// TimestampType.fromJSONObject("now") is the server's clock. No bind check is kept
		// for a scalar column, so the bound value is never looked at.
		{"fromJson(?) bound to \"now\"", reviewSchema,
			"INSERT INTO u (k, ts) VALUES (1, fromJson(?))", []any{`"now"`}},
		// 7. Float keys bound to bound: equalKeyValues compares float32 through
		// reflect.Value.Float(), a float64 conversion that quiets a signalling NaN. gocql
		// sends math.Float32bits as is (0x7f800001 vs 0x7fc00001): two partitions (the
		// token hashes the bytes), the append is in one, the delete in the other.
		{"float32 signalling vs quiet NaN partition keys", reviewSchema,
			b("DELETE FROM f WHERE k = ?; UPDATE f SET l = l + [1] WHERE k = ?"), []any{sNaN, qNaN}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdict.ClassifyWithSchema(tc.cql, tc.schema).ForValues(tc.values, inspector{})
			if v.Idempotent {
				t.Errorf("%s %v\njudged idempotent; Cassandra makes a repeat differ", tc.cql, tc.values)
			}
		})
	}
}

// TestReviewBoundJSONNow: the same 'now' key in a bound INSERT JSON document (ForValues).
func TestReviewBoundJSONNow(t *testing.T) {
	for _, doc := range []string{
		`{"k": 1, "m": {"now": 1}}`,
		`{"k": 1, "m": {"\u006eow": 1}}`,
		`{"k": 1, "m": "{\"NOW\": 1}"}`,
	} {
		v := verdict.ClassifyWithSchema("INSERT INTO u JSON ?", reviewSchema).ForValues([]any{doc}, inspector{})
		if v.Idempotent {
			t.Errorf("INSERT INTO u JSON ? with %s: judged idempotent (a map<timestamp,…> key \"now\" is the server's clock)", doc)
		}
	}
}

// TestReviewBoundJSONQuotedKeyLists: the bound form of the handleCaseSensitivity case.
func TestReviewBoundJSONQuotedKeyLists(t *testing.T) {
	doc := `{"k": "a", "c": 1, "\"L\"": [1], "L": []}`
	v := verdict.ClassifyWithSchema("INSERT INTO t JSON ?", withLists{reviewSchema}).ForValues([]any{doc}, inspector{})
	if v.Idempotent {
		t.Errorf("INSERT INTO t JSON ? with %s: judged idempotent; Cassandra writes l = [1]", doc)
	}
}

// TestReviewSoundControls: shapes checked and found sound; they must stay as they are.
func TestReviewSoundControls(t *testing.T) {
	b := func(stmts string) string { return "BEGIN UNLOGGED BATCH " + stmts + " APPLY BATCH" }
	for _, tc := range []struct {
		name   string
		cql    string
		values []any
		want   bool
	}{
		{"map literal with a space after the colon", "INSERT INTO t (k, c, v) VALUES ('a', 1, {'x': uuid()})", nil, false},
		{"named markers used twice, positional values", b("DELETE FROM t WHERE k = :k AND c = :c; UPDATE t SET l = l + [1] WHERE k = :k AND c = :c"),
			[]any{"a", 1, "a", 1}, true},
		{"named markers used twice, values differ", b("DELETE FROM t WHERE k = :k AND c = :c; UPDATE t SET l = l + [1] WHERE k = :k AND c = :c"),
			[]any{"a", 1, "a", 2}, false},
		{"qualified vs unqualified table without a default keyspace", b("DELETE FROM ks.t WHERE k = 'a' AND c = 1; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1"), nil, false},
		{"quoted column name of another case", b(`DELETE "L" FROM t WHERE k = 'a' AND c = 1; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1`), nil, false},
		{"UDT field delete is not a column delete", b("DELETE l.f FROM t WHERE k = 'a' AND c = 1; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1"), nil, false},
		{"INSERT with USING TIMESTAMP after VALUES", b("DELETE FROM t WHERE k = 'a' AND c = 1; INSERT INTO t (k, c, l) VALUES ('a', 1, [1]) USING TTL 5 AND TIMESTAMP 3"), nil, false},
		{"token() relation", b("DELETE FROM t WHERE token(k) = token('a'); UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1"), nil, false},
		{"tuple relation", b("DELETE FROM t WHERE k = 'a' AND (c) = (1); UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1"), nil, false},
		{"UNSET key", b("DELETE FROM t WHERE k = ? AND c = 1; UPDATE t SET l = l + [1] WHERE k = ? AND c = 1"), []any{unset{}, unset{}}, false},
		{"typed nil key", b("DELETE FROM t WHERE k = ? AND c = 1; UPDATE t SET l = l + [1] WHERE k = ? AND c = 1"), []any{(*string)(nil), (*string)(nil)}, false},
		{"'now' to a timestamp column", "INSERT INTO u (k, ts) VALUES (1, 'now')", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdict.ClassifyWithSchema(tc.cql, reviewSchema).ForValues(tc.values, inspector{})
			if v.Idempotent != tc.want {
				t.Errorf("%s %v: idempotent %v, want %v (%q)", tc.cql, tc.values, v.Idempotent, tc.want, v.Reasons)
			}
		})
	}
}

// TestReviewSharedVerdict: one cached verdict judged by many goroutines with different
// values, alone and in protocol batches (run with -race): no shared slice is written.
func TestReviewSharedVerdict(t *testing.T) {
	cql := "BEGIN BATCH DELETE FROM t WHERE k = ? AND c = ?; UPDATE t SET l = ?, v = ? WHERE k = ? AND c = ?; UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 1 APPLY BATCH"
	shared := verdict.ClassifyWithSchema(cql, reviewSchema)
	del := verdict.ClassifyWithSchema("DELETE FROM t WHERE k = ? AND c = ?", reviewSchema)
	set := verdict.ClassifyWithSchema("UPDATE t SET l = ?, v = ? WHERE k = ? AND c = ?", reviewSchema)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				c := (g + i) % 2
				// DELETE row (a, c); bound list on row (a, 1); literal append on (a, 1).
				v := shared.ForValues([]any{"a", c, []int{1}, 2, "a", 1}, inspector{})
				if v.Idempotent != (c == 1) {
					t.Errorf("text batch c=%d: idempotent %v (%q)", c, v.Idempotent, v.Reasons)
				}
				vals := [][]any{{"a", c}, {[]int{1}, 2, "a", 1}}
				e := []verdict.Verdict{del.ForValues(vals[0], inspector{}), set.ForValues(vals[1], inspector{})}
				bv := verdict.Batch(e, func(i int) []any { return vals[i] }, inspector{}, false, false)
				if bv.Idempotent != (c == 1) {
					t.Errorf("protocol batch c=%d: idempotent %v (%q)", c, bv.Idempotent, bv.Reasons)
				}
				_ = v.WithReason("x")
			}
		}()
	}
	wg.Wait()
}

// jsonDoc is an application's own string type for JSON documents.
type jsonDoc string

// TestReviewBoundJSONOtherTypes: ForValues reads a bound INSERT JSON document only when
// it is a string, []byte or *string (values.go jsonText); any other type is skipped
// (`continue`), so neither the list check nor the 'now' check runs. gocql marshals a
// json.RawMessage (a named []byte) or a named string type to text by reflection, and
// Cassandra parses the document as usual: a list column gets another copy per repeat.
func TestReviewBoundJSONOtherTypes(t *testing.T) {
	for _, val := range []any{
		json.RawMessage(`{"k": "a", "c": 1, "l": [1]}`),
		jsonDoc(`{"k": "a", "c": 1, "l": [1]}`),
	} {
		v := verdict.ClassifyWithSchema("INSERT INTO t JSON ?", reviewSchema).ForValues([]any{val}, inspector{})
		if v.Idempotent {
			t.Errorf("INSERT INTO t JSON ? bound to %T: judged idempotent; the document appends to list l", val)
		}
	}
}
