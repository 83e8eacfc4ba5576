package verdict_test

import (
	"math"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// myTS is a named integer: gocql would marshal it through its own methods if it had
// any, so the verdict does not read it as a timestamp.
type myTS int64

// TestShadowedOwnTimestamp: a list write and a DELETE of the same batch where one or
// both carry their own USING TIMESTAMP: the write is hidden when the DELETE's timestamp
// is not below the write's — literals compared as they are, the batch's T only when the
// execution's timestamp is known (AtTimestamp; 0: not known).
func TestShadowedOwnTimestamp(t *testing.T) {
	b := func(stmts string) string { return "BEGIN UNLOGGED BATCH " + stmts + " APPLY BATCH" }
	const (
		del    = "DELETE FROM t WHERE k = 'a' AND c = 0"
		app    = "UPDATE t SET l = l + [1] WHERE k = 'a' AND c = 0"
		app5   = "UPDATE t USING TIMESTAMP 5 SET l = l + [1] WHERE k = 'a' AND c = 0"
		del10  = "DELETE FROM t USING TIMESTAMP 10 WHERE k = 'a' AND c = 0"
		delAny = "DELETE FROM t USING TIMESTAMP ? WHERE k = 'a' AND c = 0"
	)
	for _, tc := range []struct {
		name   string
		cql    string
		at     int64
		values []any
		want   bool
	}{
		{"both literal, the delete later", b(del10 + "; " + app5), 0, nil, true},
		{"both literal, a tie goes to the delete", b("DELETE FROM t USING TIMESTAMP 5 WHERE k = 'a' AND c = 0; " + app5), 0, nil, true},
		{"both literal, the delete earlier", b("DELETE FROM t USING TIMESTAMP 4 WHERE k = 'a' AND c = 0; " + app5), 0, nil, false},
		{"delete at T, write at 5: T = 10", b(del + "; " + app5), 10, nil, true},
		{"delete at T, write at 5: T = 5", b(del + "; " + app5), 5, nil, true},
		{"delete at T, write at 5: T = 4", b(del + "; " + app5), 4, nil, false},
		{"delete at T, write at 5: T not known", b(del + "; " + app5), 0, nil, false},
		{"delete at 10, write at T: T = 10", b(del10 + "; " + app), 10, nil, true},
		{"delete at 10, write at T: T = 11", b(del10 + "; " + app), 11, nil, false},
		{"delete at 10, write at T: T not known", b(del10 + "; " + app), 0, nil, false},
		{"bound delete timestamp int64", b(delAny + "; " + app5), 0, []any{int64(5)}, true},
		{"bound delete timestamp int", b(delAny + "; " + app5), 0, []any{7}, true},
		{"bound delete timestamp below the write's", b(delAny + "; " + app5), 0, []any{int64(4)}, false},
		{"bound delete timestamp uint64", b(delAny + "; " + app5), 0, []any{uint64(5)}, false},
		{"bound delete timestamp of a named type", b(delAny + "; " + app5), 0, []any{myTS(5)}, false},
		{"bound delete timestamp nil", b(delAny + "; " + app5), 0, []any{nil}, false},
		{"bound delete timestamp missing", b(delAny + "; " + app5), 0, nil, false},
		{"bound timestamp against T", b(delAny + "; " + app), 9, []any{int64(9)}, true},
		{"bound timestamp against T, below", b(delAny + "; " + app), 9, []any{int64(8)}, false},
		{"negative literals", b("DELETE FROM t USING TIMESTAMP -5 WHERE k = 'a' AND c = 0; UPDATE t USING TIMESTAMP -7 SET l = l + [1] WHERE k = 'a' AND c = 0"), 0, nil, true},
		{"negative literals, the delete earlier", b("DELETE FROM t USING TIMESTAMP -7 WHERE k = 'a' AND c = 0; UPDATE t USING TIMESTAMP -5 SET l = l + [1] WHERE k = 'a' AND c = 0"), 0, nil, false},
		{"minus apart from the number", b("DELETE FROM t USING TIMESTAMP - 5 WHERE k = 'a' AND c = 0; " + app5), 0, nil, false},
		{"TTL and TIMESTAMP", b(del10 + "; UPDATE t USING TTL 5 AND TIMESTAMP 3 SET l = l + [1] WHERE k = 'a' AND c = 0"), 0, nil, true},
		{"TIMESTAMP and TTL", b(del10 + "; UPDATE t USING TIMESTAMP 3 AND TTL 5 SET l = l + [1] WHERE k = 'a' AND c = 0"), 0, nil, true},
		{"insert with its own timestamp", b(del10 + "; INSERT INTO t (k, c, l) VALUES ('a', 0, [1]) USING TIMESTAMP 10"), 0, nil, true},
		{"insert with a later timestamp", b(del10 + "; INSERT INTO t (k, c, l) VALUES ('a', 0, [1]) USING TIMESTAMP 11"), 0, nil, false},
		{"static list under a partition delete, own timestamps", b("DELETE FROM t USING TIMESTAMP 10 WHERE k = 'a'; UPDATE t USING TIMESTAMP 5 SET s = s + [1] WHERE k = 'a'"), 0, nil, true},
		{"static list above a partition delete, own timestamps", b("DELETE FROM t USING TIMESTAMP 10 WHERE k = 'a'; UPDATE t USING TIMESTAMP 11 SET s = s + [1] WHERE k = 'a'"), 0, nil, false},
		{"another row", b(del10 + "; UPDATE t USING TIMESTAMP 5 SET l = l + [1] WHERE k = 'a' AND c = 1"), 0, nil, false},
		{"a timestamp that is no integer", b("DELETE FROM t USING TIMESTAMP 1e3 WHERE k = 'a' AND c = 0; " + app5), 0, nil, false},
		{"a timestamp beyond int64", b("DELETE FROM t USING TIMESTAMP 9223372036854775808 WHERE k = 'a' AND c = 0; " + app5), 0, nil, false},
		// Long.MIN_VALUE is Cassandra's "no deletion": never compared (review).
		{"bound delete timestamp Long.MIN_VALUE", b("DELETE FROM t USING TIMESTAMP ? WHERE k = 'a' AND c = 0; UPDATE t USING TIMESTAMP ? SET l = l + [1] WHERE k = 'a' AND c = 0"), 0, []any{int64(math.MinInt64), int64(math.MinInt64)}, false},
		{"T at Long.MIN_VALUE", b("DELETE FROM t USING TIMESTAMP -9223372036854775807 WHERE k = 'a' AND c = 0; " + app), math.MinInt64, nil, false},
		{"a batch with its own timestamp", "BEGIN UNLOGGED BATCH USING TIMESTAMP 10 " + del + "; " + app + " APPLY BATCH", 3, nil, true},
		// Cassandra refuses a statement's own timestamp in a batch that has one: never covered.
		{"own timestamp inside a timestamped batch", "BEGIN UNLOGGED BATCH USING TIMESTAMP 10 " + del + "; " + app5 + " APPLY BATCH", 10, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verdict.ClassifyWithSchema(tc.cql, shadowSchema).AtTimestamp(tc.at).ForValues(tc.values, inspector{})
			if v.Idempotent != tc.want {
				t.Errorf("%s at %d\nidempotent = %v, want %v (reasons %q)", tc.cql, tc.at, v.Idempotent, tc.want, v.Reasons)
			}
		})
	}
}

// TestShadowedOwnTimestampProtocolBatch: the same across a protocol batch's entries,
// the batch's timestamp given to BatchAt.
func TestShadowedOwnTimestampProtocolBatch(t *testing.T) {
	del := verdict.ClassifyWithSchema("DELETE FROM t WHERE k = ? AND c = ?", shadowSchema)
	delTS := verdict.ClassifyWithSchema("DELETE FROM t USING TIMESTAMP ? WHERE k = ? AND c = ?", shadowSchema)
	app5 := verdict.ClassifyWithSchema("UPDATE t USING TIMESTAMP 5 SET l = l + ? WHERE k = ? AND c = ?", shadowSchema)
	app := verdict.ClassifyWithSchema("UPDATE t SET l = l + ? WHERE k = ? AND c = ?", shadowSchema)
	for _, tc := range []struct {
		name    string
		entries []verdict.Verdict
		values  [][]any
		at      int64
		want    bool
	}{
		{"delete at T = 10 over a write at 5", []verdict.Verdict{del, app5}, [][]any{{"a", 1}, {[]int{1}, "a", 1}}, 10, true},
		{"delete at T = 4 over a write at 5", []verdict.Verdict{del, app5}, [][]any{{"a", 1}, {[]int{1}, "a", 1}}, 4, false},
		{"T not known", []verdict.Verdict{del, app5}, [][]any{{"a", 1}, {[]int{1}, "a", 1}}, 0, false},
		{"bound delete timestamp over a write at T", []verdict.Verdict{delTS, app}, [][]any{{int64(20), "a", 1}, {[]int{1}, "a", 1}}, 20, true},
		{"bound delete timestamp below T", []verdict.Verdict{delTS, app}, [][]any{{int64(19), "a", 1}, {[]int{1}, "a", 1}}, 20, false},
		{"bound delete timestamp, another row", []verdict.Verdict{delTS, app}, [][]any{{int64(20), "a", 2}, {[]int{1}, "a", 1}}, 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := protocolBatch(tc.entries, tc.values, tc.at)
			if v.Idempotent != tc.want {
				t.Errorf("idempotent = %v, want %v (reasons %q)", v.Idempotent, tc.want, v.Reasons)
			}
		})
	}
}
