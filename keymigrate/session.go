package keymigrate

import (
	"context"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	core "github.com/cqlsafe/cqlsafe/internal/core/keymigrate"
	coresettle "github.com/cqlsafe/cqlsafe/internal/core/settle"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
)

// session is a gocql session and the migration's retry policy for core.Migration.
type session struct {
	s *gocql.Session
	m *Migration // its policy, as the options left it
}

func (x *session) Iter(ctx context.Context, q string, args []any, pageSize, n int, row func([][]byte) bool) error {
	iter := x.s.Query(q, args...).WithContext(ctx).PageSize(pageSize).Idempotent(true).Iter()
	return cqlvalue.EachRow(iter, n, row)
}

func (x *session) Row(ctx context.Context, q string, args []any, n int, serial bool) ([][]byte, bool, error) {
	qry := x.s.Query(q, args...).WithContext(ctx).Idempotent(true)
	if serial {
		qry = qry.Consistency(gocql.Consistency(gocql.Serial))
	}
	iter := qry.Iter()
	return cqlvalue.Row(iter, n)
}

func (x *session) Exec(ctx context.Context, q string, args []any) error {
	return x.s.Query(q, args...).WithContext(ctx).Exec()
}

func (x *session) HasTable(keyspace, name string) bool {
	_, ok, _ := cqlvalue.Table(x.s, keyspace, name)
	return ok
}

func (x *session) AwaitSchemaAgreement(ctx context.Context) error {
	return x.s.AwaitSchemaAgreement(ctx)
}

func execOptions(ts int64, notRepeatable string) []retry.ExecOption {
	var opts []retry.ExecOption
	if ts != 0 {
		opts = append(opts, retry.AtTimestamp(ts))
	}
	if notRepeatable != "" {
		opts = append(opts, retry.NotRepeatable(notRepeatable))
	}
	return opts
}

func (x *session) Write(ctx context.Context, q string, args []any, ts int64, notRepeatable string) error {
	return x.m.policy.Exec(ctx, x.s.Query(q, args...), execOptions(ts, notRepeatable)...)
}

func (x *session) Batch(ctx context.Context, stmts []core.Stmt, ts int64, notRepeatable string) error {
	b := x.s.NewBatch(gocql.LoggedBatch)
	for _, st := range stmts {
		b.Query(st.CQL, st.Args...)
	}
	return x.m.policy.ExecBatch(ctx, x.s, b, execOptions(ts, notRepeatable)...)
}

func (x *session) CAS(ctx context.Context, q string, args []any) (bool, error) {
	// Sent once, whatever the session's retry policy: a re-sent lease LWT that had
	// applied finds its own row and answers [applied]=false (settled instead).
	return x.s.Query(q, args...).WithContext(ctx).Idempotent(false).RetryPolicy(cqlvalue.NoRetry{}).MapScanCAS(map[string]any{})
}

func (x *session) SettleLWT(ctx context.Context, q string, args []any, after time.Duration) (coresettle.LWTOutcome, error) {
	st, err := settle.LWT(ctx, x.s, retry.Statement{CQL: q, Values: args}, settle.After(after))
	return st.Outcome, err
}

func (x *session) Class(err error) decision.ErrorClass { return retry.ClassifyError(err) }

func (x *session) RequestError(err error) (int, string, bool) {
	return cqlvalue.RequestError(err)
}

func (x *session) Clock() *clientid.Clock { return x.m.policy.Clock() }
