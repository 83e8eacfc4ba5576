package settle

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
)

func TestSettlePlanLWT(t *testing.T) {
	lookup := testSchema()
	for _, tc := range []struct {
		name      string
		cql       string
		values    []any
		rowDelete bool
		mustExist bool
		expect    []string
		changed   bool
		err       string
	}{
		{name: "insert if not exists", cql: `INSERT INTO kv (id, v, w) VALUES (?, ?, ?) IF NOT EXISTS`, values: []any{1, "x", gocql.UnsetValue}, mustExist: true, expect: []string{"v"}, changed: true},
		{name: "update, condition on the set column to another value", cql: `UPDATE kv SET v = ? WHERE id = ? IF v = ?`, values: []any{"new", 1, "old"}, expect: []string{"v"}, changed: true},
		{name: "update, condition to the same value", cql: `UPDATE kv SET v = ? WHERE id = ? IF v = ?`, values: []any{"same", 1, "same"}, expect: []string{"v"}},
		{name: "update, condition on another column", cql: `UPDATE kv SET v = 'x' WHERE id = 1 IF w = 5`, expect: []string{"v"}},
		{name: "update, != the new value", cql: `UPDATE kv SET w = ? WHERE id = ? IF w != ?`, values: []any{3, 1, 3}, expect: []string{"w"}, changed: true},
		{name: "update if exists", cql: `UPDATE kv SET v = ? WHERE id = ? IF EXISTS`, values: []any{"x", 1}, expect: []string{"v"}},
		{name: "update, condition null, set a value", cql: `UPDATE kv SET v = ? WHERE id = ? IF v = null`, values: []any{"x", 1}, expect: []string{"v"}, changed: true},
		{name: "delete if exists", cql: `DELETE FROM kv WHERE id = ? IF EXISTS`, values: []any{1}, rowDelete: true, changed: true},
		{name: "delete if value", cql: `DELETE FROM kv WHERE id = ? IF w = ?`, values: []any{1, 4}, rowDelete: true, changed: true},
		{name: "delete if null", cql: `DELETE FROM kv WHERE id = ? IF w = ?`, values: []any{1, nil}, rowDelete: true},
		{name: "delete column if exists", cql: `DELETE v FROM kv WHERE id = ? IF EXISTS`, values: []any{1}, expect: []string{"v"}},
		{name: "delete column if it has a value", cql: `DELETE v FROM kv WHERE id = ? IF v = 'a'`, values: []any{1}, expect: []string{"v"}, changed: true},

		{name: "not conditional", cql: `INSERT INTO kv (id, v) VALUES (?, ?)`, values: []any{1, "x"}, err: "not a conditional write"},
		{name: "list append", cql: `UPDATE t SET l = l + ? WHERE k = ? AND c = ? IF EXISTS`, values: []any{[]int{1}, 1, "a"}, err: "not a whole-column value"},
		{name: "element delete", cql: `DELETE m['a'] FROM t WHERE k = ? AND c = ? IF EXISTS`, values: []any{1, "a"}, err: "element delete"},
		{name: "partition-level condition", cql: `UPDATE t SET s = ? WHERE k = ? IF s = ?`, values: []any{1, 1, 2}, err: "primary key column c"},
		{name: "json", cql: `INSERT INTO kv JSON ? IF NOT EXISTS`, values: []any{`{"id":1}`}, err: "INSERT JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := planLWT("ks", retry.Statement{CQL: tc.cql, Values: tc.values}, lookup)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for _, e := range plan.Expect {
				cols = append(cols, e.Column)
			}
			if plan.RowDelete != tc.rowDelete || plan.MustExist != tc.mustExist || !slices.Equal(cols, tc.expect) || plan.Changed != tc.changed {
				t.Errorf("rowDelete %v mustExist %v expect %v changed %v, want %v %v %v %v",
					plan.RowDelete, plan.MustExist, cols, plan.Changed, tc.rowDelete, tc.mustExist, tc.expect, tc.changed)
			}
		})
	}
}

func TestSettleJudgeLWT(t *testing.T) {
	textT := cqlvalue.NativeType(4, gocql.TypeVarchar, "")
	setT := gocql.CollectionType{NativeType: cqlvalue.NativeType(4, gocql.TypeSet, ""), Elem: cqlvalue.NativeType(4, gocql.TypeInt, "")}
	udtT := gocql.UDTTypeInfo{NativeType: cqlvalue.NativeType(4, gocql.TypeUDT, "")}
	cell := func(typ gocql.TypeInfo, v any) rawCell {
		b, err := gocql.Marshal(typ, v)
		if err != nil {
			t.Fatal(err)
		}
		return rawCell{Info: typ, Data: b}
	}
	// Cassandra returns a set in its own order; [3 1 2] is bound, the read says [1 2 3].
	sorted := rawCell{Info: setT, Data: []byte{0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 3}}
	insert := lwtPlan{MustExist: true, Changed: true, Expect: []expectation{{Column: "v", Value: "x"}}}
	for _, tc := range []struct {
		name   string
		plan   lwtPlan
		row    []rawCell
		exists bool
		want   LWTOutcome
	}{
		{"insert, row holds its values", insert, []rawCell{cell(textT, "x")}, true, LWTApplied},
		{"insert, row holds other values", insert, []rawCell{cell(textT, "y")}, true, LWTNotApplied},
		{"insert, no row", insert, nil, false, LWTNotApplied},
		{"insert, empty string is not null", insert, []rawCell{{Info: textT, Data: []byte{}}}, true, LWTNotApplied},
		{"insert of key columns only", lwtPlan{MustExist: true, Changed: true}, []rawCell{cell(textT, "k")}, true, LWTUnknown},
		{"update to the same value", lwtPlan{Expect: []expectation{{Column: "v", Value: "x"}}}, []rawCell{cell(textT, "x")}, true, LWTUnknown},
		{"update, bound null, column null", lwtPlan{Changed: true, Expect: []expectation{{Column: "v"}}}, []rawCell{{Info: textT}}, true, LWTApplied},
		{"set in another order", lwtPlan{Changed: true, Expect: []expectation{{Column: "st", Value: []int{3, 1, 2}, Multi: true}}}, []rawCell{sorted}, true, LWTApplied},
		{"empty non-frozen set reads as null", lwtPlan{Changed: true, Expect: []expectation{{Column: "st", Value: []int{}, Multi: true}}}, []rawCell{{Info: setT}}, true, LWTApplied},
		{"a UDT that differs as bytes", lwtPlan{Changed: true, Expect: []expectation{{Column: "u", Value: []byte{1}}}}, []rawCell{{Info: udtT, Data: []byte{2}}}, true, LWTUnknown},
		{"row delete, row gone", lwtPlan{RowDelete: true, Changed: true}, nil, false, LWTApplied},
		{"row delete, row there", lwtPlan{RowDelete: true, Changed: true}, []rawCell{cell(textT, "k")}, true, LWTNotApplied},
		{"row delete without a condition that needs the row", lwtPlan{RowDelete: true}, nil, false, LWTUnknown},
	} {
		got := judgeLWT(tc.plan, tc.row, tc.exists)
		if got.Outcome != tc.want || got.Why == "" {
			t.Errorf("%s: %v (%s), want %v", tc.name, got.Outcome, got.Why, tc.want)
		}
	}
}
