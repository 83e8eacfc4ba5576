package tombstone

import (
	"context"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/clientid"
	"github.com/cqlsafe/cqlsafe/gocqlv2/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	core "github.com/cqlsafe/cqlsafe/internal/core/tombstone"
)

// session is a v2 session and retry policy for core.Store.
type session struct {
	s *gocql.Session
	p *retry.Policy
}

func (x session) Columns(keyspace, name string) ([]string, bool, error) {
	km, err := x.s.KeyspaceMetadata(keyspace)
	if err != nil {
		return nil, false, err
	}
	tm, ok := km.Tables[name]
	if !ok {
		return nil, false, nil
	}
	cols := make([]string, 0, len(tm.Columns))
	for c := range tm.Columns {
		cols = append(cols, c)
	}
	return cols, true, nil
}

func (x session) Row(ctx context.Context, q string, args []any, n int, atSerial bool) ([][]byte, bool, error) {
	qry := x.s.Query(q, args...)
	if atSerial {
		// A read at SERIAL completes or fences any Paxos round in progress on the row.
		qry = qry.Consistency(gocql.Serial)
	}
	iter := qry.IterContext(ctx)
	return cqlvalue.Row(iter, n)
}

func (x session) Records(ctx context.Context, q string, args []any, row func(core.RecordRow[gocql.UUID])) error {
	iter := x.s.Query(q, args...).IterContext(ctx)
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
	iter := x.s.Query(q).PageSize(1000).IterContext(ctx)
	var tn, action string
	var rk []byte
	var id gocql.UUID
	for iter.Scan(&tn, &rk, &id, &action) {
		row(tn, rk)
	}
	return iter.Close()
}

func (x session) batch(kind gocql.BatchType, stmts []core.Stmt) *gocql.Batch {
	b := x.s.Batch(kind)
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

// noRetry never retries: the restore is an LWT, and a re-sent LWT that had applied
// sees its own row and says "not applied".
type noRetry struct{}

func (noRetry) Attempt(gocql.RetryableQuery) bool  { return false }
func (noRetry) GetRetryType(error) gocql.RetryType { return gocql.Rethrow }

func (x session) CAS(ctx context.Context, stmts []core.Stmt) (bool, error) {
	// Never re-sent (see noRetry); entries stay non-idempotent, so no speculative copies.
	b := x.batch(gocql.UnloggedBatch, stmts).RetryPolicy(noRetry{})
	applied, _, err := b.MapExecCASContext(ctx, map[string]any{})
	return applied, err
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
