package overwrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

// Scope is what an overwrite's DELETE removes.
type Scope int

const (
	// ScopeRow: a row deletion (the table has clustering columns; sibling rows and
	// static columns survive).
	ScopeRow Scope = iota
	// ScopePartition: a partition deletion (Partition, or a table without clustering
	// columns, where the row is the partition).
	ScopePartition
)

func (s Scope) String() string {
	if s == ScopePartition {
		return "partition"
	}
	return "row"
}

// Result reports an overwrite.
type Result struct {
	// Timestamp is N: the DELETE was written at N, the INSERTs at N+1.
	Timestamp int64
	Scope     Scope
	Rows      int
	// Batches is how many batches were sent: 1 unless Partition had to split.
	Batches int
}

// Option configures Row and Partition (WithTimestamp, WithTTL, WithConsistency,
// WithSerialConsistency, WithRetryPolicy, WithMaxBatchBytes). Options are plain values:
// passing them allocates nothing. The zero Option changes nothing.
type Option struct {
	set options // the fields this option gives; the others are zero
	err error   // an invalid option: Row and Partition return it, nothing sent
}

type options struct {
	ts             int64
	ttl            int
	consistency    gocql.Consistency
	consistencySet bool // ANY is gocql.Consistency 0: "set" is tracked apart from the value
	serial         gocql.SerialConsistency
	policy         *retry.Policy
	maxBytes       int
}

// defaults: N from the retry policy's clock (two values reserved), no TTL, the session's
// consistency, retries through a retry.NewPolicy() kept with the Table, batches split
// above 4 MiB of values.
func defaults() options {
	return options{maxBytes: 4 << 20}
}

// WithTimestamp pins N yourself (µs since the epoch): the DELETE is written at n and the
// INSERT at n+1. Use it to re-apply an overwrite with its original timestamp. A row with
// a non-empty non-frozen list cannot be re-applied (ErrListNotRepeatable). n must be
// positive.
func WithTimestamp(n int64) Option {
	if n <= 0 || n == 1<<63-1 {
		return Option{err: fmt.Errorf("overwrite: timestamp %d out of range", n)}
	}
	return Option{set: options{ts: n}}
}

// WithTTL gives the written cells a time to live (the delete has none).
func WithTTL(d time.Duration) Option {
	if d < time.Second || d > 20*365*24*time.Hour {
		return Option{err: fmt.Errorf("overwrite: TTL %v outside 1s..20 years", d)}
	}
	return Option{set: options{ttl: int(d / time.Second)}}
}

// WithConsistency sets the batch's consistency level.
func WithConsistency(c gocql.Consistency) Option {
	if c > gocql.LocalOne {
		return Option{err: fmt.Errorf("overwrite: consistency %v out of range", c)}
	}
	return Option{set: options{consistency: c, consistencySet: true}}
}

// WithSerialConsistency sets the batch's serial consistency (for completeness: an
// overwrite has no conditions).
func WithSerialConsistency(c gocql.SerialConsistency) Option {
	if c != gocql.Serial && c != gocql.LocalSerial {
		return Option{err: fmt.Errorf("overwrite: serial consistency %v: want SERIAL or LOCAL_SERIAL", c)}
	}
	return Option{set: options{serial: c}}
}

// WithRetryPolicy retries through p (default retry.NewPolicy()). The batch is
// idempotent: every attempt re-sends the same timestamps.
func WithRetryPolicy(p *retry.Policy) Option {
	if p == nil {
		return Option{err: errors.New("overwrite: nil retry policy")}
	}
	if err := p.Err(); err != nil {
		return Option{err: fmt.Errorf("overwrite: %w", err)}
	}
	return Option{set: options{policy: p}}
}

// WithMaxBatchBytes bounds the values in one batch of Partition (default 4 MiB, well
// under Cassandra's maximum mutation size). Larger partitions are split into several
// batches: see Partition.
func WithMaxBatchBytes(n int) Option {
	if n < 1024 {
		return Option{err: fmt.Errorf("overwrite: max batch bytes %d below 1024", n)}
	}
	return Option{set: options{maxBytes: n}}
}

// buildOptions applies opts in order over the defaults (a later option of a kind
// replaces an earlier one); the first invalid option is the error.
func buildOptions(t *Table, opts []Option) (options, error) {
	o := defaults()
	for _, opt := range opts {
		if opt.err != nil {
			return o, opt.err
		}
		x := opt.set
		if x.ts != 0 {
			o.ts = x.ts
		}
		if x.ttl != 0 {
			o.ttl = x.ttl
		}
		if x.consistencySet {
			o.consistency, o.consistencySet = x.consistency, true
		}
		if x.serial != 0 {
			o.serial = x.serial
		}
		if x.policy != nil {
			o.policy = x.policy
		}
		if x.maxBytes != 0 {
			o.maxBytes = x.maxBytes
		}
	}
	if o.policy == nil && t != nil {
		o.policy = defaultPolicy(t)
	}
	return o, nil
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
	values, err := t.Values(row) // with room for the TTL and timestamp bound last
	if err != nil {
		return Result{}, err
	}
	if o.ts != 0 {
		if err := refuseListReapply(t, values, -1); err != nil {
			return Result{}, err
		}
	}
	if s == nil {
		return Result{}, errors.New("overwrite: nil session")
	}
	n := o.ts
	if n == 0 {
		n = o.policy.Clock().Reserve(2)
	}
	scope := ScopeRow
	keyCols := len(t.PartitionKey) + len(t.Clustering)
	if len(t.Clustering) == 0 {
		scope = ScopePartition
	}
	keyArgs, err := t.KeyArgs(values[:keyCols])
	if err != nil {
		return Result{}, err
	}
	insert, insArgs, err := t.InsertRow(table.UsingTTL|table.UsingTimestamp, values)
	if err != nil {
		return Result{}, err
	}
	delArgs := make([]any, 0, 1+len(keyArgs))
	delArgs = append(delArgs, n)
	delArgs = append(delArgs, keyArgs...)
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Entries = make([]gocql.BatchEntry, 0, 2)
	// Without clustering columns DeleteRow is the partition deletion: the row is the
	// partition.
	b.Query(t.DeleteRow(), delArgs...)
	b.Query(insert, append(insArgs, o.ttlValue(), n+1)...)
	if err := o.exec(ctx, s, b, n); err != nil {
		return Result{Timestamp: n, Scope: scope, Rows: 1, Batches: 1}, err
	}
	return Result{Timestamp: n, Scope: scope, Rows: 1, Batches: 1}, nil
}

// markIdempotent marks b's entries idempotent, as the retry policy's verdict will find
// them but for a row with a non-empty non-frozen list (which it then marks not
// idempotent itself): the policy need not copy the entries to mark them.
func markIdempotent(b *gocql.Batch) {
	for i := range b.Entries {
		b.Entries[i].Idempotent = true
	}
}

// ttlValue is what the INSERT binds to USING TTL ?: the caller's TTL, else UNSET so the
// table's default_time_to_live applies (an explicit 0 would override it).
func (o *options) ttlValue() any {
	if o.ttl == 0 {
		return gocql.UnsetValue
	}
	return o.ttl
}

func (o *options) exec(ctx context.Context, s *gocql.Session, b *gocql.Batch, n int64) error {
	markIdempotent(b)
	if o.consistencySet {
		b.SetConsistency(o.consistency)
	}
	if o.serial != 0 {
		b.SerialConsistency(o.serial)
	}
	// The statements carry their own timestamps; the batch's default is N+1 too.
	return o.policy.ExecBatch(ctx, s, b, retry.AtTimestamp(n+1))
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
	rv := reflect.ValueOf(rows)
	if rows == nil || (rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array) {
		return Result{}, tableErr(ErrNotARow, t, "", fmt.Sprintf("rows must be a slice, got %T", rows))
	}
	if rv.Len() == 0 {
		return Result{}, tableErr(ErrNoRows, t, "", "")
	}
	all := make([][]any, rv.Len()) // each row's INSERT arguments
	inserts := make([]string, rv.Len())
	var firstKey []byte
	var pk []any // the partition key (every row's)
	for i := range all {
		vals, err := t.Values(rv.Index(i).Interface())
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Row = i
			}
			return Result{}, err
		}
		pk = vals[:len(t.PartitionKey)]
		key, err := t.EncodePartitionKey(pk)
		if err != nil {
			return Result{}, err
		}
		if i == 0 {
			firstKey = key
		} else if !bytes.Equal(key, firstKey) {
			e := tableErr(ErrMixedPartitions, t, "", "partition key differs from row 0")
			e.Row = i
			return Result{}, e
		}
		if o.ts != 0 {
			if err := refuseListReapply(t, vals, i); err != nil {
				return Result{}, err
			}
		}
		// The INSERT and its arguments now, so a tuple that does not split is an
		// error before anything is sent.
		insert, args, err := t.InsertRow(table.UsingTTL|table.UsingTimestamp, vals)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Row = i
			}
			return Result{}, err
		}
		all[i], inserts[i] = args, insert
	}
	if s == nil {
		return Result{}, errors.New("overwrite: nil session")
	}
	n := o.ts
	if n == 0 {
		n = o.policy.Clock().Reserve(2)
	}
	res := Result{Timestamp: n, Scope: ScopePartition, Rows: len(all)}
	pkArgs, err := t.KeyArgs(pk)
	if err != nil {
		return Result{}, err
	}
	delArgs := append([]any{n}, pkArgs...)
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query(t.DeletePartition(), delArgs...)
	size := 0
	for i, vals := range all {
		rowSize := valuesSize(vals)
		if size > 0 && size+rowSize > o.maxBytes {
			if err := o.exec(ctx, s, b, n); err != nil {
				return res, fmt.Errorf("overwrite: batch %d (rows before %d): %w", res.Batches+1, i, err)
			}
			res.Batches++
			b = s.NewBatch(gocql.UnloggedBatch)
			size = 0
		}
		b.Query(inserts[i], append(vals, o.ttlValue(), n+1)...)
		size += rowSize
	}
	if err := o.exec(ctx, s, b, n); err != nil {
		return res, err
	}
	res.Batches++
	return res, nil
}

// valuesSize estimates the bytes a row's values take on the wire.
func valuesSize(vals []any) int {
	n := 0
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			n += len(x)
		case []byte:
			n += len(x)
		default:
			n += 16
		}
		n += 4
	}
	return n
}

// refuseListReapply returns ErrListNotRepeatable when vals give a non-empty value to a
// non-frozen list column (Values left empty ones UNSET).
func refuseListReapply(t *Table, vals []any, row int) error {
	for i, c := range t.Columns() {
		if c.Collection && c.Type.Type() == gocql.TypeList && vals[i] != gocql.UnsetValue {
			e := tableErr(ErrListNotRepeatable, t, c.Name, "use frozen<list<…>> or set<…>, or overwrite without WithTimestamp")
			e.Row = row
			return e
		}
	}
	return nil
}
