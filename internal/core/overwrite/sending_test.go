package overwrite

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func plan(sizes ...int) Plan {
	p := Plan{Scope: ScopePartition, Delete: Stmt{"DELETE", []any{nil, "k"}}}
	if sizes == nil { // a Row's plan
		p.Scope, p.row = ScopeRow, Stmt{"INSERT 0", []any{"v", nil, nil}}
		return p
	}
	for i, n := range sizes {
		p.rows = append(p.rows, Stmt{fmt.Sprintf("INSERT %d", i), []any{"v", nil, nil}})
		p.sizes = append(p.sizes, n)
	}
	return p
}

// send runs a Sending as an adapter does, failing the batch numbered failAt (0: none).
func send(p *Plan, maxBytes int, row bool, failAt int) ([]string, Result, error) {
	var batches []string
	var buf [2]Stmt
	sn := p.Send(100, "ttl", maxBytes, row)
	for sn.Next() {
		var names []string
		for _, st := range sn.Stmts(buf[:0]) {
			names = append(names, st.CQL)
		}
		batches = append(batches, strings.Join(names, "+"))
		if len(batches) == failAt {
			res, err := sn.Fail(errors.New("timeout"))
			return batches, res, err
		}
	}
	return batches, sn.Result(), nil
}

// TestSending: the DELETE leads the first batch; INSERTs split at maxBytes (a row over
// it alone in its batch); every statement stamped N (DELETE) and TTL, N+1 (INSERTs);
// Result.Batches is 1 for a Row whatever happens and the batches sent for a Partition;
// a failure after a sent batch says which rows did not follow.
func TestSending(t *testing.T) {
	p := plan()
	b, res, err := send(&p, 10, true, 0)
	if fmt.Sprint(b) != "[DELETE+INSERT 0]" || err != nil || res.Batches != 1 || res.Rows != 1 || res.Timestamp != 100 || res.Scope != ScopeRow {
		t.Fatalf("row: %v %+v %v", b, res, err)
	}
	if p.Delete.Args[0] != int64(100) || p.row.Args[1] != "ttl" || p.row.Args[2] != int64(101) {
		t.Fatalf("stamps: %v %v", p.Delete.Args, p.row.Args)
	}
	if _, res, err := send(&p, 10, true, 1); err == nil || strings.Contains(err.Error(), "batch") || res.Batches != 1 {
		t.Fatalf("row failing: %+v %v", res, err)
	}
	p = plan(4, 4, 4, 20, 1)
	b, res, err = send(&p, 10, false, 0)
	if fmt.Sprint(b) != "[DELETE+INSERT 0+INSERT 1 INSERT 2 INSERT 3 INSERT 4]" || err != nil || res.Batches != 4 || res.Rows != 5 {
		t.Fatalf("partition: %v %+v %v", b, res, err)
	}
	for _, st := range p.rows {
		if st.Args[2] != int64(101) {
			t.Fatalf("INSERT not at N+1: %v", st.Args)
		}
	}
	if _, res, err := send(&p, 10, false, 1); err == nil || err.Error() != "timeout" || res.Batches != 0 {
		t.Fatalf("first batch failing: %+v %v", res, err)
	}
	_, res, err = send(&p, 10, false, 3)
	if err == nil || res.Batches != 2 || !strings.Contains(err.Error(), "batch 3 (rows 3 and after; the first 2 batches applied)") {
		t.Fatalf("third batch failing: %+v %v", res, err)
	}
	if b, _, _ := send(&p, 1<<20, false, 0); len(b) != 1 {
		t.Fatalf("all in one: %v", b)
	}
}

// TestSendingAllocatesNothing: a Row's sending, as the adapters run it.
func TestSendingAllocatesNothing(t *testing.T) {
	p := plan()
	var n int
	allocs := testing.AllocsPerRun(100, func() {
		var buf [2]Stmt
		sn := p.Send(100, nil, 10, true)
		for sn.Next() {
			n += len(sn.Stmts(buf[:0]))
		}
		_ = sn.Result()
	})
	if allocs != 0 { // N and N+1 are small here: boxing them allocates nothing
		t.Fatalf("%v allocations", allocs)
	}
}

// TestSendingNextAfterEnd: Next keeps saying false once the batches are sent, and the
// result does not change.
func TestSendingNextAfterEnd(t *testing.T) {
	p := plan(4, 4)
	sn := p.Send(100, nil, 10, false)
	for sn.Next() {
	}
	again, more := sn.Next(), sn.Next()
	if again || more || sn.Result().Batches != 1 {
		t.Fatalf("after the end: %+v", sn.Result())
	}
}
