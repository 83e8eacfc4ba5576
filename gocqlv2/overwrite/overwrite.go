package overwrite

import (
	"context"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	core "github.com/cqlsafe/cqlsafe/internal/core/overwrite"
)

// Option configures Row and Partition (WithTimestamp, WithTTL, WithConsistency,
// WithSerialConsistency, WithRetryPolicy, WithMaxBatchBytes). Options are plain values:
// passing them allocates nothing. The zero Option changes nothing.
type Option = core.Option[gocql.Consistency, gocql.Consistency, retry.Policy]

type options = core.Options[gocql.Consistency, gocql.Consistency, retry.Policy]

// WithTimestamp pins N (µs since the epoch): the DELETE at n, the INSERT at n+1, to
// re-apply an overwrite with its original timestamp. n must be positive.
func WithTimestamp(n int64) Option {
	return core.Timestamp[gocql.Consistency, gocql.Consistency, retry.Policy](n)
}

// WithTTL gives the written cells a time to live (the delete has none).
func WithTTL(d time.Duration) Option {
	return core.TTL[gocql.Consistency, gocql.Consistency, retry.Policy](d)
}

// WithConsistency sets the batch's consistency level.
func WithConsistency(c gocql.Consistency) Option {
	// SERIAL and LOCAL_SERIAL are Consistency values in v2: not a write's consistency.
	return core.Consistency[gocql.Consistency, gocql.Consistency, retry.Policy](c, c <= gocql.LocalOne && c != gocql.Serial && c != gocql.LocalSerial)
}

// WithSerialConsistency sets the batch's serial consistency, SERIAL or LOCAL_SERIAL
// (for completeness: an overwrite has no conditions).
func WithSerialConsistency(c gocql.Consistency) Option {
	return core.Serial[gocql.Consistency, gocql.Consistency, retry.Policy](c, c == gocql.Serial || c == gocql.LocalSerial)
}

// WithRetryPolicy retries through p (default retry.NewPolicy(), one per table).
func WithRetryPolicy(p *retry.Policy) Option {
	return core.Policy[gocql.Consistency, gocql.Consistency](p, p.Err)
}

// WithMaxBatchBytes bounds the values in one batch of Partition (default 4 MiB).
func WithMaxBatchBytes(n int) Option {
	return core.MaxBatchBytes[gocql.Consistency, gocql.Consistency, retry.Policy](n)
}

// Row replaces one row with ONE unlogged single-partition batch: a DELETE of the row at
// timestamp N and an INSERT of the given columns at N+1 (see overwrite.Row of the gocql
// v1.7 package, whose rules these are). row is a map[string]any or a struct with `db`
// tags; every key column must be given. Bad input returns an *Error before anything is
// sent.
func Row(ctx context.Context, s *gocql.Session, t *Table, row any, opts ...Option) (Result, error) {
	if t == nil {
		return Result{}, &Error{Err: ErrUnknownTable, Row: -1, Detail: "nil table"}
	}
	o, err := core.Apply(opts, func() *retry.Policy { return policies.For(t, newPolicy) })
	if err != nil {
		return Result{}, err
	}
	p, err := core.PlanRow(t, row, o.TS != 0)
	if err != nil {
		return Result{}, err
	}
	return send(ctx, s, &o, &p, true)
}

// Partition replaces a whole partition: a partition DELETE at N and every row INSERTed
// at N+1, in one unlogged batch — or, above WithMaxBatchBytes, several at the same
// timestamps (atomic per batch). rows is a slice of rows of one partition.
func Partition(ctx context.Context, s *gocql.Session, t *Table, rows any, opts ...Option) (Result, error) {
	if t == nil {
		return Result{}, &Error{Err: ErrUnknownTable, Row: -1, Detail: "nil table"}
	}
	o, err := core.Apply(opts, func() *retry.Policy { return policies.For(t, newPolicy) })
	if err != nil {
		return Result{}, err
	}
	p, err := core.PlanPartition(t, rows, o.TS != 0)
	if err != nil {
		return Result{}, err
	}
	return send(ctx, s, &o, &p, false)
}

// send draws N from the policy's clock unless pinned and sends the plan's batches in
// order, stopping at the first that fails. row: Row's plan (its Result counts its one
// batch, sent or not).
func send(ctx context.Context, s *gocql.Session, o *options, p *core.Plan, row bool) (Result, error) {
	if s == nil {
		return Result{}, errNilSession
	}
	n := o.TS
	if n == 0 {
		n = o.Policy.Clock().Reserve(2)
	}
	var buf [2]core.Stmt
	sn := p.Send(n, o.TTLValue(gocql.UnsetValue), o.MaxBytes, row)
	for sn.Next() {
		if err := execBatch(ctx, s, o, n, sn.Stmts(buf[:0])); err != nil {
			return sn.Fail(err)
		}
	}
	return sn.Result(), nil
}

// execBatch sends one unlogged batch of stmts through the policy, pinned at N+1.
func execBatch(ctx context.Context, s *gocql.Session, o *options, n int64, stmts []core.Stmt) error {
	b := s.Batch(gocql.UnloggedBatch)
	b.Entries = make([]gocql.BatchEntry, 0, len(stmts))
	for _, st := range stmts {
		// Marked idempotent as the policy's verdict finds them, but for a row with a
		// non-empty non-frozen list, which the policy then marks not idempotent itself:
		// the policy need not copy the entries to mark them.
		b.Entries = append(b.Entries, gocql.BatchEntry{Stmt: st.CQL, Args: st.Args, Idempotent: true})
	}
	if o.ConsistencySet {
		b.Consistency(o.Consistency)
	}
	if o.Serial != 0 {
		b.SerialConsistency(o.Serial)
	}
	// The statements carry their own timestamps; the batch's default is N+1 too.
	return o.Policy.ExecBatch(ctx, s, b, retry.AtTimestamp(n+1))
}
