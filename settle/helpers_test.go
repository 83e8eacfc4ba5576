package settle

import (
	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/settle"
	coretable "github.com/cqlsafe/cqlsafe/internal/core/table"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

// The mapping tests run the core's planning and judging through gocql v1.7's types, with
// tables as gocql's schema metadata describes them (table.FromMetadata).

type (
	tableLookup = func(keyspace, name string) (*gocql.TableMetadata, error)
	settlePlan  = core.WritePlan
	lwtPlan     = core.LWTPlan
	expectation = core.Expectation
)

func described(lookup tableLookup) core.Lookup[gocql.TypeInfo] {
	return func(keyspace, name string) (*coretable.Table[gocql.TypeInfo], error) {
		tm, err := lookup(keyspace, name)
		if err != nil || tm == nil {
			return nil, err
		}
		return table.FromMetadata(tm)
	}
}

func planSettle(ks string, st retry.Statement, lookup tableLookup, pinned int64) (settlePlan, error) {
	return core.PlanWrite(cqlvalue.Driver{}, ks, st, described(lookup), pinned)
}

func planLWT(ks string, st retry.Statement, lookup tableLookup) (lwtPlan, error) {
	return core.PlanLWT(cqlvalue.Driver{}, ks, st, described(lookup))
}

func judgeLWT(plan lwtPlan, row []rawCell, exists bool) LWTResult {
	cells := make([]core.Cell[gocql.TypeInfo], len(row))
	for i, c := range row {
		cells[i] = core.Cell[gocql.TypeInfo](c)
	}
	return core.JudgeLWT(cqlvalue.Driver{}, plan, cells, exists)
}

var (
	judgeWriteTimes = core.JudgeWriteTimes
	aggregate       = core.Aggregate
)
