// Package overwrite is cqlsafe's overwrite without a driver: what Row and Partition
// send (a DELETE at N and INSERTs at N+1, in batches), their checks and their options'
// ranges. The overwrite packages for gocql v1.7 and the v2 driver build and send the
// batches through their retry policy; the statements and rules are here.
package overwrite

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/table"
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

// Sentinels of the overwrite packages (besides package table's).
var (
	ErrCounterTable    = errors.New("overwrite: table has counter columns")
	ErrMixedPartitions = errors.New("overwrite: rows of different partitions")
	ErrNoRows          = errors.New("overwrite: no rows")
	// ErrListNotRepeatable: WithTimestamp (a re-application) with a non-empty value for a
	// non-frozen list column. Cassandra keys list elements by server-side TimeUUIDs, so
	// re-applying appends a second copy; use frozen<list<…>> or set<…>, or overwrite
	// again without WithTimestamp (a fresh, newer timestamp).
	ErrListNotRepeatable = errors.New("overwrite: non-frozen list cannot be re-applied with a pinned timestamp")
)

// DefaultMaxBatchBytes bounds the values in one batch of Partition unless told
// otherwise: well under Cassandra's maximum mutation size.
const DefaultMaxBatchBytes = 4 << 20

// CheckTimestamp, CheckTTL and CheckMaxBatchBytes are the options' ranges.
func CheckTimestamp(n int64) error {
	if n <= 0 || n == 1<<63-1 {
		return fmt.Errorf("overwrite: timestamp %d out of range", n)
	}
	return nil
}

// CheckTTL returns the TTL in seconds.
func CheckTTL(d time.Duration) (int, error) {
	if d < time.Second || d > 20*365*24*time.Hour {
		return 0, fmt.Errorf("overwrite: TTL %v outside 1s..20 years", d)
	}
	return int(d / time.Second), nil
}

func CheckMaxBatchBytes(n int) error {
	if n < 1024 {
		return fmt.Errorf("overwrite: max batch bytes %d below 1024", n)
	}
	return nil
}

// RefuseCounters returns ErrCounterTable naming t's first counter column (by name).
func RefuseCounters[TI any](t *table.Table[TI]) error {
	first := ""
	for _, c := range append(append([]table.Column[TI](nil), t.Static...), t.Regular...) {
		if c.IsCounter() && (first == "" || c.Name < first) {
			first = c.Name
		}
	}
	if first != "" {
		return tableErr(ErrCounterTable, t, first, "counters are not idempotent and cannot be overwritten")
	}
	return nil
}

// Stmt is one statement of a batch and what it binds.
type Stmt struct {
	CQL  string
	Args []any
}

// Plan is what an overwrite sends, checked before anything is: the DELETE and the rows'
// INSERTs, whose timestamp (and TTL) Stamp fills in. It is a value: planning and
// sending a Row allocate nothing beyond the statements' arguments.
type Plan struct {
	Scope  Scope
	Delete Stmt // Args[0] is N
	row    Stmt // Row's INSERT; each INSERT's Args end with the TTL, then N+1
	rows   []Stmt
	sizes  []int
}

// Len is the number of INSERTs (rows).
func (p *Plan) Len() int {
	if p.rows == nil {
		return 1
	}
	return len(p.rows)
}

func (p *Plan) insert(i int) Stmt {
	if p.rows == nil {
		return p.row
	}
	return p.rows[i]
}

// Stamp sets N (the DELETE's timestamp; the INSERTs are at N+1) and the INSERTs' TTL
// value (the driver's UnsetValue for none: the table's default_time_to_live applies).
func (p *Plan) Stamp(n int64, ttl any) {
	p.Delete.Args[0] = n
	next := n + 1
	for i := range p.Len() {
		ins := p.insert(i)
		ins.Args[len(ins.Args)-2], ins.Args[len(ins.Args)-1] = ttl, next
	}
}

// Send stamps the plan with N and the TTL value and returns the sending of its batches:
// the first holds the DELETE, each as many INSERTs as fit in maxBytes of values
// (estimated, at least one). row: the plan is Row's (its Result counts its one batch,
// sent or not). The driver adapter sends each batch, in order:
//
//	var buf [2]Stmt
//	sn := p.Send(n, ttl, maxBytes, row)
//	for sn.Next() {
//		if err := send(sn.Stmts(buf[:0])); err != nil {
//			return sn.Fail(err)
//		}
//	}
//	return sn.Result(), nil
//
// A Sending is a value: sending a Row allocates nothing here.
func (p *Plan) Send(n int64, ttl any, maxBytes int, row bool) Sending {
	p.Stamp(n, ttl)
	sn := Sending{p: p, maxBytes: maxBytes, row: row, from: -1, res: Result{Timestamp: n, Scope: p.Scope, Rows: p.Len()}}
	if row {
		sn.res.Batches = 1 // Row's one batch, sent or not
	}
	return sn
}

// Sending is the sending of a plan's batches (Plan.Send).
type Sending struct {
	p          *Plan
	maxBytes   int
	row        bool
	from, next int // the current batch's first INSERT, and the one after its last
	sent       int
	res        Result
}

// Next readies the next batch; false when every batch was sent (and on every call after).
func (sn *Sending) Next() bool {
	if sn.from >= sn.p.Len() {
		return false
	}
	if sn.from < 0 {
		sn.from = 0
	} else { // the current batch was sent
		sn.sent++
		if !sn.row {
			sn.res.Batches = sn.sent
		}
		sn.from = sn.next
	}
	if sn.from >= sn.p.Len() {
		return false
	}
	sn.next = sn.p.end(sn.from, sn.maxBytes)
	return true
}

// Stmts appends the current batch's statements to dst and returns them.
func (sn *Sending) Stmts(dst []Stmt) []Stmt {
	if sn.from == 0 {
		dst = append(dst, sn.p.Delete)
	}
	if sn.p.rows == nil {
		return append(dst, sn.p.row)
	}
	return append(dst, sn.p.rows[sn.from:sn.next]...)
}

// Fail is the result and error of the current batch failing with err: after a batch was
// sent, the error says which rows did not follow (the first batches hold the DELETE).
func (sn *Sending) Fail(err error) (Result, error) {
	if sn.sent > 0 {
		err = fmt.Errorf("overwrite: batch %d (rows %d and after; the first %d batches applied): %w", sn.sent+1, sn.from, sn.sent, err)
	}
	return sn.res, err
}

// Result is the overwrite's result once Next returned false.
func (sn *Sending) Result() Result { return sn.res }

// end is the index after the last INSERT of the batch whose first is from: as many as
// fit in maxBytes of values, at least one.
func (p *Plan) end(from, maxBytes int) int {
	if p.rows == nil {
		return 1
	}
	size, i := 0, from
	for ; i < len(p.rows); i++ {
		if size > 0 && size+p.sizes[i] > maxBytes {
			break
		}
		size += p.sizes[i]
	}
	return i
}

// PlanRow checks row and plans its overwrite: a DELETE of the row (of the partition
// when the table has no clustering columns) and its INSERT. pinned (WithTimestamp)
// refuses a non-empty non-frozen list (ErrListNotRepeatable).
func PlanRow[TI any](t *table.Table[TI], row any, pinned bool) (Plan, error) {
	values, err := t.Values(row) // with room for the TTL and timestamp bound last
	if err != nil {
		return Plan{}, err
	}
	if pinned {
		if err := refuseListReapply(t, values, -1); err != nil {
			return Plan{}, err
		}
	}
	scope := ScopeRow
	if len(t.Clustering) == 0 {
		scope = ScopePartition
	}
	keyArgs, err := t.KeyArgs(values[:len(t.PartitionKey)+len(t.Clustering)])
	if err != nil {
		return Plan{}, err
	}
	insert, insArgs, err := t.InsertRow(table.UsingTTL|table.UsingTimestamp, values)
	if err != nil {
		return Plan{}, err
	}
	delArgs := make([]any, 1, 1+len(keyArgs))
	delArgs = append(delArgs, keyArgs...)
	// Without clustering columns DeleteRow is the partition deletion: the row is the
	// partition.
	return Plan{Scope: scope, Delete: Stmt{t.DeleteRow(), delArgs}, row: Stmt{insert, append(insArgs, nil, nil)}}, nil
}

// PlanPartition checks rows (a slice or array of rows as PlanRow takes them, all of one
// partition) and plans the partition's overwrite: a partition DELETE and every row's
// INSERT.
func PlanPartition[TI any](t *table.Table[TI], rows any, pinned bool) (Plan, error) {
	rv := reflect.ValueOf(rows)
	if rows == nil || (rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array) {
		return Plan{}, tableErr(ErrNotARow, t, "", fmt.Sprintf("rows must be a slice, got %T", rows))
	}
	if rv.Len() == 0 {
		return Plan{}, tableErr(ErrNoRows, t, "", "")
	}
	p := Plan{Scope: ScopePartition, rows: make([]Stmt, rv.Len()), sizes: make([]int, rv.Len())}
	var firstKey []byte
	var pk []any // the partition key (every row's)
	atRow := func(err error, i int) error {
		var e *table.Error
		if errors.As(err, &e) {
			e.Row = i
		}
		return err
	}
	for i := range p.rows {
		vals, err := t.Values(rv.Index(i).Interface())
		if err != nil {
			return Plan{}, atRow(err, i)
		}
		pk = vals[:len(t.PartitionKey)]
		key, err := t.EncodePartitionKey(pk)
		if err != nil {
			return Plan{}, err
		}
		if i == 0 {
			firstKey = key
		} else if !bytes.Equal(key, firstKey) {
			return Plan{}, atRow(tableErr(ErrMixedPartitions, t, "", "partition key differs from row 0"), i)
		}
		if pinned {
			if err := refuseListReapply(t, vals, i); err != nil {
				return Plan{}, err
			}
		}
		// The INSERT and its arguments now, so a tuple that does not split is an
		// error before anything is sent.
		insert, args, err := t.InsertRow(table.UsingTTL|table.UsingTimestamp, vals)
		if err != nil {
			return Plan{}, atRow(err, i)
		}
		p.rows[i], p.sizes[i] = Stmt{insert, append(args, nil, nil)}, valuesSize(args)
	}
	pkArgs, err := t.KeyArgs(pk)
	if err != nil {
		return Plan{}, err
	}
	p.Delete = Stmt{t.DeletePartition(), append([]any{nil}, pkArgs...)}
	return p, nil
}

// ErrNotARow is package table's, for PlanPartition's rows.
var ErrNotARow = table.ErrNotARow

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
func refuseListReapply[TI any](t *table.Table[TI], vals []any, row int) error {
	for i, c := range t.Columns() {
		if c.IsList() && vals[i] != t.Unset() {
			e := tableErr(ErrListNotRepeatable, t, c.Name, "use frozen<list<…>> or set<…>, or overwrite without WithTimestamp")
			e.Row = row
			return e
		}
	}
	return nil
}

func tableErr[TI any](sentinel error, t *table.Table[TI], column, detail string) *table.Error {
	e := &table.Error{Err: sentinel, Column: column, Row: -1, Detail: detail}
	if t != nil {
		e.Keyspace, e.Table = t.Keyspace, t.Name
	}
	return e
}
