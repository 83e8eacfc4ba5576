package settle

import (
	"testing"

	"github.com/cqlsafe/cqlsafe/retry"
)

func TestSettleJudgeWriteTimes(t *testing.T) {
	for _, tc := range []struct {
		times []int64
		want  Outcome
	}{
		{nil, NotVisible},
		{[]int64{999}, NotVisible},
		{[]int64{1000}, Landed},
		{[]int64{1001}, Superseded},
		{[]int64{1001, 1000}, Landed}, // one column overwritten by a newer write, the other still ours
		{[]int64{999, 1001}, Superseded},
	} {
		if got := judgeWriteTimes(1000, tc.times); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.times, got, tc.want)
		}
	}
}

func TestSettleAggregate(t *testing.T) {
	lookup := testSchema()
	plan := func(cql string, values ...any) settlePlan {
		p, _ := planSettle("ks", retry.Statement{CQL: cql, Values: values}, lookup, 1)
		return p
	}
	del1 := plan(`DELETE FROM kv USING TIMESTAMP ? WHERE id = ?`, int64(1), 1)
	ins1 := plan(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "x")
	ins2 := plan(`INSERT INTO kv (id, v) VALUES (?, ?)`, 2, "x")
	st := func(os ...Outcome) []StatementResult {
		out := make([]StatementResult, len(os))
		for i, o := range os {
			out[i].Outcome = o
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		sts    []StatementResult
		plans  []settlePlan
		logged bool
		want   Outcome
	}{
		{"one statement", st(Landed), []settlePlan{ins1}, false, Landed},
		{"overwrite batch: delete + insert, one partition", st(Unsettleable, Landed), []settlePlan{del1, ins1}, false, Landed},
		{"overwrite batch not visible", st(Unsettleable, NotVisible), []settlePlan{del1, ins1}, false, NotVisible},
		{"unlogged, two partitions, one landed", st(Landed, NotVisible), []settlePlan{ins1, ins2}, false, Mixed},
		{"unlogged, two partitions, both landed", st(Landed, Landed), []settlePlan{ins1, ins2}, false, Landed},
		{"unlogged, two partitions, one unsettleable", st(Unsettleable, Landed), []settlePlan{del1, ins2}, false, Mixed},
		{"logged: one landed is all", st(Landed, NotVisible), []settlePlan{ins1, ins2}, true, Landed},
		{"logged: superseded and not visible", st(Superseded, NotVisible), []settlePlan{ins1, ins2}, true, Mixed},
		{"nothing settleable", st(Unsettleable, Unsettleable), []settlePlan{del1, del1}, false, Unsettleable},
	} {
		if got := aggregate(tc.sts, tc.plans, tc.logged); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
