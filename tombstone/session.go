package tombstone

import (
	"context"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	core "github.com/cqlsafe/cqlsafe/internal/core/tombstone"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
)

// session is a gocql session and retry policy for core.Store.
type session struct {
	s *gocql.Session
	p *retry.Policy
}

func (x session) Columns(keyspace, name string) ([]string, bool, error) {
	tm, ok, err := cqlvalue.Table(x.s, keyspace, name)
	if !ok {
		return nil, false, err
	}
	cols := make([]string, 0, len(tm.Columns))
	for c := range tm.Columns {
		cols = append(cols, c)
	}
	return cols, true, nil
}

// serial is SERIAL as a read consistency (the protocol shares the codes): a read at
// SERIAL completes or fences any Paxos round in progress on the row.
const serial = gocql.Consistency(gocql.Serial)

func (x session) Row(ctx context.Context, q string, args []any, n int, atSerial bool) ([][]byte, bool, error) {
	qry := x.s.Query(q, args...).WithContext(ctx)
	if atSerial {
		qry = qry.Consistency(serial)
	}
	iter := qry.Iter()
	return cqlvalue.Row(iter, n)
}

func (x session) Records(ctx context.Context, q string, args []any, row func(core.RecordRow[gocql.UUID])) error {
	iter := x.s.Query(q, args...).WithContext(ctx).Iter()
	for {
		var r core.RecordRow[gocql.UUID]
		if !iter.Scan(&r.ID, &r.CommandID, &r.Action, &r.At, &r.Timestamp, &r.Values, &r.Times, &r.Written) {
			break
		}
		row(r)
	}
	return iter.Close()
}

func (x session) Keys(ctx context.Context, q string, row func(string, []byte)) error {
	iter := x.s.Query(q).WithContext(ctx).PageSize(1000).Iter()
	var tn, action string
	var rk []byte
	var id gocql.UUID
	for iter.Scan(&tn, &rk, &id, &action) {
		row(tn, rk)
	}
	return iter.Close()
}

func (x session) batch(kind gocql.BatchType, stmts []core.Stmt) *gocql.Batch {
	b := x.s.NewBatch(kind)
	for _, st := range stmts {
		b.Query(st.CQL, st.Args...)
	}
	return b
}

func (x session) Batch(ctx context.Context, logged bool, stmts []core.Stmt) error {
	kind := gocql.UnloggedBatch
	if logged {
		kind = gocql.LoggedBatch
	}
	return x.p.ExecBatch(ctx, x.s, x.batch(kind, stmts), retry.AtTimestamp(x.p.Clock().Next()))
}

func (x session) Exec(ctx context.Context, q string, args []any) error {
	return x.p.Exec(ctx, x.s.Query(q, args...))
}

func (x session) CAS(ctx context.Context, stmts []core.Stmt) (bool, error) {
	// Never re-sent (cqlvalue.NoRetry: a re-sent LWT that had applied sees its own row); entries stay non-idempotent, so no speculative copies.
	b := x.batch(gocql.UnloggedBatch, stmts).WithContext(ctx)
	b.RetryPolicy(cqlvalue.NoRetry{})
	// Not MapExecuteBatchCAS: when the restore does not apply, Cassandra answers with the
	// existing row, which gocql v1.7 cannot map-scan when it holds a type gocql has no Go
	// type for (a vector), and MapExecuteBatchCAS then panics reading [applied]. An
	// applied CAS answers [applied] alone; more columns mean not applied.
	applied, iter, err := x.s.ExecuteBatchCAS(b)
	if iter != nil && len(iter.Columns()) > 1 {
		// Not applied: the answer holds the existing row. (The ScyllaDB fork reports the
		// columns not scanned as an error.)
		_ = iter.Close()
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_ = iter.Close()
	return applied, nil
}

// MayHaveApplied: Unavailable and Overloaded too — legacy Paxos can report them at the
// commit phase, after a quorum accepted the proposal, which a later round then completes
// (decision.ConditionalMayHaveApplied; without the error's consistency, judged as the
// commit's).
func (session) MayHaveApplied(err error) bool {
	c := retry.ClassifyError(err)
	return decision.ConditionalMayHaveApplied(decision.Facts{Class: c})
}

func (x session) Clock() *clientid.Clock { return x.p.Clock() }
