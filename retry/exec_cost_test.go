package retry

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// benchParallel runs op b.N times from 8 goroutines per CPU, each call with a new id,
// reporting allocations.
func benchParallel(b *testing.B, op func(id int64) error) {
	var i atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(i.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkExecClientCost: the client's cost of Policy.Exec over a raw gocql Exec of the
// same idempotent INSERT with a client timestamp (what a careful hand-written write
// does), against the loopback fake server answering at once, so that Cassandra's share,
// which dominates on a real node, is left out. Compare allocs/op of "raw" and
// "Policy.Exec" from the same run (BENCHMARKS.md, "What the library adds on the client").
func BenchmarkExecClientCost(b *testing.B) {
	srv := startRV(b, func(int64) (time.Duration, bool) { return 0, false })
	const stmt = `INSERT INTO ks.t (id, v) VALUES (?, ?)`
	b.Run("raw", func(b *testing.B) {
		sess := rvSession(b, srv)
		benchParallel(b, func(id int64) error {
			return sess.Query(stmt, id, "v").Idempotent(true).WithTimestamp(time.Now().UnixMicro()).Exec()
		})
	})
	b.Run("Policy.Exec", func(b *testing.B) {
		sess := rvSession(b, srv)
		p := NewPolicy(WithSchema(mapSchema{}))
		benchParallel(b, func(id int64) error {
			return p.Exec(context.Background(), sess.Query(stmt, id, "v"))
		})
	})
}

// BenchmarkExecBatchClientCost: Policy.ExecBatch over a raw ExecuteBatch of the same
// two-statement unlogged batch with a client timestamp — overwrite.Row's shape, a
// DELETE and an INSERT of one row (the fake server types every marker as an int, so
// the statements carry no USING TIMESTAMP markers) — against the loopback fake server.
func BenchmarkExecBatchClientCost(b *testing.B) {
	srv := startRV(b, func(int64) (time.Duration, bool) { return 0, false })
	const del = `DELETE FROM ks.t WHERE id = ?`
	const ins = `INSERT INTO ks.t (id, v) VALUES (?, ?)`
	for _, side := range []string{"raw", "Policy.ExecBatch"} {
		b.Run(side, func(b *testing.B) {
			sess := rvSession(b, srv)
			p := NewPolicy(WithSchema(mapSchema{}))
			benchParallel(b, func(id int64) error {
				n := p.Clock().Reserve(2)
				bt := sess.NewBatch(gocql.UnloggedBatch)
				bt.Entries = make([]gocql.BatchEntry, 0, 2)
				bt.Query(del, id)
				bt.Query(ins, id, "v")
				if side == "raw" {
					return sess.ExecuteBatch(bt.WithTimestamp(n + 1))
				}
				return p.ExecBatch(context.Background(), sess, bt, AtTimestamp(n+1))
			})
		})
	}
}

// TestExecOptionsAllocateNothing: options are values, applied without an allocation
// (the write path passes AtTimestamp on every overwrite.Row), and a later option of a
// kind replaces an earlier one.
func TestExecOptionsAllocateNothing(t *testing.T) {
	var c execConfig
	allocs := testing.AllocsPerRun(100, func() {
		c, _ = execOptions([]ExecOption{AtTimestamp(7), Operation("overwrite.Row"), OnlyIfRepeatable(), AtTimestamp(9)})
	})
	if allocs != 0 {
		t.Errorf("execOptions allocates %v times per call, want 0", allocs)
	}
	if c.TS != 9 || c.Operation != "overwrite.Row" || !c.OnlyRepeatable || c.NotRepeatable != "" {
		t.Errorf("options applied as %+v", c)
	}
	if _, err := execOptions([]ExecOption{AtTimestamp(9), AtTimestamp(0)}); err == nil {
		t.Error("AtTimestamp(0) accepted")
	}
	if c, err := execOptions([]ExecOption{{}}); err != nil || c != (execConfig{}) {
		t.Errorf("the zero ExecOption: %+v, %v; want no change", c, err)
	}
}

// TestPinBatchMarksEntriesAsTheVerdict: entries the caller marked idempotent are sent
// as the verdict says — not idempotent for a list append — on a copy, the caller's
// batch unchanged; entries marked as the verdict says already are not copied.
func TestPinBatchMarksEntriesAsTheVerdict(t *testing.T) {
	p := NewPolicy(WithSchema(mapSchema{"t.l": ColumnList}))
	for _, tc := range []struct {
		stmt       string
		idempotent bool
	}{{`UPDATE ks.t SET l = l + [1] WHERE id = ?`, false}, {`UPDATE ks.t SET v = 1 WHERE id = ?`, true}} {
		b := new(gocql.Session).NewBatch(gocql.UnloggedBatch)
		b.Query(tc.stmt, 1)
		b.Query(tc.stmt, 2)
		for i := range b.Entries {
			b.Entries[i].Idempotent = true
		}
		pb, err := p.pinBatch(context.Background(), nil, b, execConfig{})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range pb.batch.Entries {
			if e.Idempotent != tc.idempotent {
				t.Errorf("%s: entry %d sent with Idempotent %v, want %v", tc.stmt, i, e.Idempotent, tc.idempotent)
			}
			if !b.Entries[i].Idempotent {
				t.Errorf("%s: the caller's entry %d was changed", tc.stmt, i)
			}
		}
		if shared := &pb.batch.Entries[0] == &b.Entries[0]; shared != tc.idempotent {
			t.Errorf("%s: entries shared with the caller's batch: %v, want %v", tc.stmt, shared, tc.idempotent)
		}
	}
}
