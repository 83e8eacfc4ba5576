package overwrite

import (
	"context"
	"time"

	"github.com/gocql/gocql"

	core "github.com/cqlsafe/cqlsafe/internal/core/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Scope is what an overwrite's DELETE removes.
type Scope = core.Scope

const (
	// ScopeRow: a row deletion (the table has clustering columns; sibling rows and
	// static columns survive).
	ScopeRow = core.ScopeRow
	// ScopePartition: a partition deletion (Partition, or a table without clustering
	// columns, where the row is the partition).
	ScopePartition = core.ScopePartition
)

// Result reports an overwrite: its timestamp N (the DELETE at N, the INSERTs at N+1),
// scope, rows and how many batches were sent (1 unless Partition had to split).
type Result = core.Result

// Option configures Row and Partition (WithTimestamp, WithTTL, WithConsistency,
// WithSerialConsistency, WithRetryPolicy, WithMaxBatchBytes). Options are plain values:
// passing them allocates nothing. The zero Option changes nothing.
type Option = core.Option[gocql.Consistency, gocql.SerialConsistency, retry.Policy]

type options = core.Options[gocql.Consistency, gocql.SerialConsistency, retry.Policy]

// WithTimestamp pins N yourself (µs since the epoch): the DELETE is written at n and the
// INSERT at n+1. Use it to re-apply an overwrite with its original timestamp. A row with
// a non-empty non-frozen list cannot be re-applied (ErrListNotRepeatable). n must be
// positive.
func WithTimestamp(n int64) Option {
	return core.Timestamp[gocql.Consistency, gocql.SerialConsistency, retry.Policy](n)
}

// WithTTL gives the written cells a time to live (the delete has none).
func WithTTL(d time.Duration) Option {
	return core.TTL[gocql.Consistency, gocql.SerialConsistency, retry.Policy](d)
}

// WithConsistency sets the batch's consistency level.
func WithConsistency(c gocql.Consistency) Option {
	return core.Consistency[gocql.Consistency, gocql.SerialConsistency, retry.Policy](c, c <= gocql.LocalOne)
}

// WithSerialConsistency sets the batch's serial consistency (for completeness: an
// overwrite has no conditions).
func WithSerialConsistency(c gocql.SerialConsistency) Option {
	return core.Serial[gocql.Consistency, gocql.SerialConsistency, retry.Policy](c, c == gocql.Serial || c == gocql.LocalSerial)
}

// WithRetryPolicy retries through p (default retry.NewPolicy()). The batch is
// idempotent: every attempt re-sends the same timestamps.
func WithRetryPolicy(p *retry.Policy) Option {
	return core.Policy[gocql.Consistency, gocql.SerialConsistency](p, p.Err)
}

// WithMaxBatchBytes bounds the values in one batch of Partition (default 4 MiB, well
// under Cassandra's maximum mutation size). Larger partitions are split into several
// batches: see Partition.
func WithMaxBatchBytes(n int) Option {
	return core.MaxBatchBytes[gocql.Consistency, gocql.SerialConsistency, retry.Policy](n)
}

// buildOptions applies opts in order over the defaults: N from the retry policy's clock
// (two values reserved), no TTL, the session's consistency, retries through a
// retry.NewPolicy() kept with the Table, batches split above 4 MiB of values.
func buildOptions(t *Table, opts []Option) (options, error) {
	if t == nil {
		return core.Apply(opts, nil)
	}
	return core.Apply(opts, func() *retry.Policy { return defaultPolicy(t) })
}

// Row replaces one row with ONE unlogged single-partition batch: a DELETE of the row at
// timestamp N and an INSERT of the given columns at N+1. Columns the row does not give
// (or gives as nil) are NULL afterwards because the delete removed them — they are bound
// as gocql.UnsetValue, never as NULL — so the overwrite leaves one row (or partition)
// tombstone instead of one cell tombstone per NULL column. Zero values (0, false, "")
// are real values and are written.
//
// row is a map[string]any keyed by column name, or a struct (or pointer to one) whose
// fields map to columns as in gocqlx (`db` tags, else snake_case names). Every partition
// and clustering key column must be given and non-nil.
//
// Scope: with clustering columns the DELETE is a row deletion, so sibling rows in the
// partition survive; without, it is the partition deletion (the row is the partition).
// Static columns are written at N+1 when given and left untouched when absent.
//
// The two statements share one partition, so Cassandra applies them as one mutation:
// atomically, and in isolation for readers of that partition. With equal timestamps
// the delete would win and the row would vanish, hence N+1. The batch is idempotent
// (same statements, same timestamps on every attempt) and retried through the retry
// policy; a late retry of an older overwrite loses to a newer one — except a row with a
// non-empty non-frozen list, which a repeat would duplicate: it is never re-sent after
// a failure that may have applied it (see the package doc).
//
// Bad input returns an *Error (see the sentinels) before anything is sent.
func Row(ctx context.Context, s *gocql.Session, t *Table, row any, opts ...Option) (Result, error) {
	if t == nil {
		return Result{}, &Error{Err: ErrUnknownTable, Row: -1, Detail: "nil table"}
	}
	o, err := buildOptions(t, opts)
	if err != nil {
		return Result{}, err
	}
	p, err := core.PlanRow(t, row, o.TS != 0)
	if err != nil {
		return Result{}, err
	}
	return send(ctx, s, &o, &p, true)
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
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Entries = make([]gocql.BatchEntry, 0, len(stmts))
	for _, st := range stmts {
		// Marked idempotent as the policy's verdict finds them, but for a row with a
		// non-empty non-frozen list, which the policy then marks not idempotent itself:
		// the policy need not copy the entries to mark them.
		b.Entries = append(b.Entries, gocql.BatchEntry{Stmt: st.CQL, Args: st.Args, Idempotent: true})
	}
	if o.ConsistencySet {
		b.SetConsistency(o.Consistency)
	}
	if o.Serial != 0 {
		b.SerialConsistency(o.Serial)
	}
	// The statements carry their own timestamps; the batch's default is N+1 too.
	return o.Policy.ExecBatch(ctx, s, b, retry.AtTimestamp(n+1))
}

// Partition replaces a whole partition: a partition DELETE at N and every row INSERTed at
// N+1, in one unlogged batch. rows is a slice (or array) of rows as Row takes them; they
// must all have the same partition key (ErrMixedPartitions), and at least one row is
// needed (ErrNoRows). Afterwards the partition holds exactly the given rows.
//
// If the rows' values exceed the batch limit (WithMaxBatchBytes, default 4 MiB) the
// work is split: the first batch holds the DELETE and the first rows, the others the
// remaining rows, all at the same timestamps. Atomicity and isolation are then per
// batch: between batches a reader can see the partition with only the first rows. Every
// batch is idempotent, so retrying the whole call converges to the same end state.
func Partition(ctx context.Context, s *gocql.Session, t *Table, rows any, opts ...Option) (Result, error) {
	if t == nil {
		return Result{}, &Error{Err: ErrUnknownTable, Row: -1, Detail: "nil table"}
	}
	o, err := buildOptions(t, opts)
	if err != nil {
		return Result{}, err
	}
	p, err := core.PlanPartition(t, rows, o.TS != 0)
	if err != nil {
		return Result{}, err
	}
	return send(ctx, s, &o, &p, false)
}
