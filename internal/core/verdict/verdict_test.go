package verdict_test

import (
	"strings"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// unset is a driver's UNSET marker stand-in; selfMarshal a value that marshals itself.
type unset struct{}
type selfMarshal struct{}

// inspector is a driver adapter's ValueInspector for these tests.
type inspector struct{}

func (inspector) IsUnset(v any) bool { _, ok := v.(unset); return ok }
func (inspector) MayMarshalList(v any) bool {
	_, ok := v.(selfMarshal)
	return ok
}

type kinds map[string]verdict.ColumnKind

func (k kinds) ColumnKind(_, table, col string) verdict.ColumnKind { return k[table+"."+col] }

// TestVerdictForValues: a bound value decides a verdict only through the adapter's
// inspector for what the core cannot know (UNSET, self-marshalling values).
func TestVerdictForValues(t *testing.T) {
	schema := kinds{"t.l": verdict.ColumnList}
	for _, tc := range []struct {
		schema verdict.Schema
		cql    string
		values []any
		want   bool
	}{
		{schema, "UPDATE t SET l = ? WHERE id = ?", []any{[]int{1}, 1}, false},
		{schema, "UPDATE t SET l = ? WHERE id = ?", []any{unset{}, 1}, true},
		{schema, "UPDATE t SET l = ? WHERE id = ?", []any{[]int{}, 1}, true},
		{schema, "UPDATE t SET l = ? WHERE id = ?", nil, false}, // no value to judge
		{nil, "INSERT INTO t (id, x) VALUES (?, ?)", []any{1, selfMarshal{}}, false},
		{nil, "INSERT INTO t (id, x) VALUES (?, ?)", []any{1, unset{}}, true},
		// Without schema a byte slice may be a list<tinyint> assigned whole (gocql
		// marshals []byte into one): not repeatable.
		{nil, "INSERT INTO t (id, x) VALUES (?, ?)", []any{1, []byte{1}}, false},
	} {
		v := verdict.ClassifyWithSchema(tc.cql, tc.schema).ForValues(tc.values, inspector{})
		if v.Idempotent != tc.want {
			t.Errorf("%q with %v: idempotent %v, want %v (%v)", tc.cql, tc.values, v.Idempotent, tc.want, v.Reasons)
		}
	}
}

// TestVerdictBatch: a batch is repeatable iff every entry is and it is not a COUNTER
// batch; more than one entry is more than one mutation.
func TestVerdictBatch(t *testing.T) {
	ins := verdict.Classify("INSERT INTO a (id) VALUES (?)")
	lwt := verdict.Classify("INSERT INTO a (id) VALUES (?) IF NOT EXISTS")
	if v := verdict.Batch([]verdict.Verdict{ins}, nil, nil, false, true); !v.Idempotent || v.MultiMutation() || !v.LoggedBatch() {
		t.Errorf("one insert, logged: %+v multi %v", v, v.MultiMutation())
	}
	if v := verdict.Batch([]verdict.Verdict{ins, ins}, nil, nil, false, false); !v.Idempotent || !v.MultiMutation() || v.LoggedBatch() {
		t.Errorf("two inserts, unlogged: %+v", v)
	}
	if v := verdict.Batch([]verdict.Verdict{ins, lwt}, nil, nil, false, true); v.Idempotent || !strings.HasPrefix(v.Reasons[0], "statement 2: ") {
		t.Errorf("insert + LWT: %+v", v)
	}
	if v := verdict.Batch([]verdict.Verdict{ins}, nil, nil, true, false); v.Idempotent {
		t.Errorf("COUNTER batch judged repeatable: %+v", v)
	}
}

// TestVerdictForSource: a marker assigned whole to a known non-frozen list is not
// repeatable in source (lint, vet); one of unknown type stays a condition.
func TestVerdictForSource(t *testing.T) {
	v := verdict.ClassifyWithSchema("UPDATE t SET l = ? WHERE id = ?", kinds{"t.l": verdict.ColumnList}).ForSource(nil)
	if v.Idempotent || len(v.ListAssignments()) != 1 {
		t.Errorf("known list: %+v", v)
	}
	v = verdict.Classify("UPDATE t SET l = ? WHERE id = ?").ForSource(nil)
	if !v.Idempotent || len(v.ValueConditions()) != 1 {
		t.Errorf("unknown type: %+v, conditions %v", v, v.ValueConditions())
	}
	v = verdict.ClassifyWithSchema("UPDATE t SET l = ? WHERE id = ?", kinds{"t.l": verdict.ColumnList}).ForSource(func(m int) bool { return m == 0 })
	if !v.Idempotent {
		t.Errorf("known list, bound to UNSET in source: %+v", v)
	}
	v = verdict.Classify("UPDATE t SET l = [] WHERE id = ?").ForSource(nil)
	if !v.Idempotent {
		t.Errorf("empty list literal: %+v", v)
	}
}

func FuzzVerdict(f *testing.F) {
	for _, s := range []string{"INSERT INTO t (id, l) VALUES (?, [1])", "BEGIN BATCH UPDATE t SET n = n + 1 WHERE id = 1; APPLY BATCH", "UPDATE t SET l = ? WHERE id = ?"} {
		f.Add(s)
	}
	f.Add("BEGIN BATCH DELETE FROM t WHERE k = ? AND c = 0; INSERT INTO t (k, c, l) VALUES ('a', 0, [now()]) APPLY BATCH")
	f.Add(`BEGIN BATCH DELETE l FROM t WHERE k = 'a'; INSERT INTO t JSON '{"k": "a", "l": [1]}' APPLY BATCH`)
	f.Fuzz(func(t *testing.T, s string) {
		vals := []any{[]int{1}, unset{}, selfMarshal{}, "a", 0, 1.5}
		for _, schema := range []verdict.Schema{kinds{"t.l": verdict.ColumnList}, shadowSchema} {
			v := verdict.ClassifyWithSchema(s, schema)
			_ = v.ForValues(vals, inspector{}).ForSource(nil)
			_ = verdict.Batch([]verdict.Verdict{v, v}, nil, nil, false, true)
			_ = verdict.Batch([]verdict.Verdict{v, v}, func(int) []any { return vals }, inspector{}, false, true)
		}
	})
}

// TestVerdictDeleteElementKeyedByServerFunction: DELETE m[toUnixTimestamp(now())]
// removes the entry the server's clock names when it runs; a late retry removes another
// one, which may exist (oracle seed 20261125, case 63108: a map<bigint, float> lost an
// entry keyed by a later millisecond). now(), uuid() and currentTimeUUID() alone name an
// entry nobody wrote (a fresh id): repeatable; wrapped in a conversion they
// name a time again. A deterministic function in the subscript stays repeatable.
func TestVerdictDeleteElementKeyedByServerFunction(t *testing.T) {
	schema := kinds{"t.m": verdict.ColumnMap, "t.s": verdict.ColumnSet}
	for _, tc := range []struct {
		cql  string
		want bool
	}{
		{"DELETE m[currentTimeUUID()] FROM t WHERE k = 1", true},
		{"DELETE s[now()], m[1] FROM t WHERE k = 1", true},
		{"DELETE m[1], s[uuid()] FROM t USING TIMESTAMP 5 WHERE k = 1", true},
		// Without roles and clustering columns a key equality is not known to name one
		// row (TestVerdictDeleteFunctionPerBound).
		{"DELETE FROM t WHERE k = 1 AND c = now()", false},
		{"DELETE FROM t WHERE k = uuid()", false},
		{"DELETE m FROM t WHERE k = 1 AND \"C\" = currentTimeUUID() IF EXISTS", false},
		{"DELETE FROM t WHERE k = 1 AND c >= now()", false},
		{"DELETE FROM t WHERE k = 1 AND c IN (now(), 1)", false},
		{"DELETE FROM t WHERE k = 1 AND c = currentTimestamp()", false},
		{"DELETE FROM t WHERE k = 1 AND (c, d) = (now(), 1)", false},
		{"DELETE m[now(1)] FROM t WHERE k = 1", false},
		{"UPDATE t SET v = 1 WHERE k = 1 AND c = now()", false},
		{"UPDATE t SET m = m - {now()} WHERE k = 1", false},
		{"DELETE m[toTimestamp(now())] FROM t WHERE k = 1", false},
		{"DELETE m[toUnixTimestamp(now())] FROM t WHERE k = 1", false},
		{"DELETE m[currentDate()] FROM t WHERE k = 1", false},
		{"DELETE m[minTimeuuid('2021-01-01 00:00+0000')] FROM t WHERE k = 1", true},
		{"DELETE m[1], s[2] FROM t WHERE k = 1", true},
	} {
		v := verdict.ClassifyWithSchema(tc.cql, schema)
		if v.Idempotent != tc.want {
			t.Errorf("%q: idempotent %v, want %v (%v)", tc.cql, v.Idempotent, tc.want, v.Reasons)
		}
	}
}
