package settle

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
	"github.com/cqlsafe/cqlsafe/internal/core/table"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// Result is what Write found; C is the driver's consistency type.
type Result[C any] struct {
	// Outcome of the write as a whole. For one statement, its outcome. For a batch
	// applied as one unit (a logged batch, whose batch log replays every statement once
	// one applied; or an unlogged batch whose statements all write one partition of one
	// table, a single mutation): Landed when any statement landed, else the outcome the
	// settleable statements share (statements that cannot be settled are ignored), else
	// Mixed. For any other batch: the outcome every statement shares, else Mixed.
	// Unsettleable when no statement could be settled.
	Outcome     Outcome
	Timestamp   int64 // the write's pinned timestamp
	Consistency C     // what the write times were read at
	Statements  []StatementResult
}

// StatementResult is Settle's finding for one statement of the write.
type StatementResult struct {
	Outcome Outcome
	// Timestamp is what the statement was written with: the pinned timestamp, or its
	// own USING TIMESTAMP.
	Timestamp int64
	// Newest is the newest write time read from the statement's cells (0: none visible).
	Newest int64
	// Columns are the columns whose write times were read.
	Columns []string
	// Skipped are written columns whose write times say nothing, one "column: why" each:
	// a bound NULL (a tombstone), UNSET (nothing written), an element removal, an empty
	// collection, or (before Cassandra 5.0) a non-frozen collection.
	Skipped []string
	// Err says why the statement could not be settled (matches ErrUnsettleable) when
	// Outcome is Unsettleable.
	Err error
}

// Session is what Write and LWT need of a driver's session, for its type description
// TI. The adapter reads at the options' consistency (Write) or serial consistency (LWT).
type Session[TI any] interface {
	// Keyspace is the session's keyspace ("" for none).
	Keyspace() string
	// Table describes a table (the adapter's table.Describe): an unknown table is
	// table.ErrUnknownTable.
	Table(ctx context.Context, keyspace, name string) (*table.Table[TI], error)
	// Read runs the SELECT q with args at the consistency Write reads at (serial: the
	// serial consistency LWT reads at) and returns the first row's n cells; found is
	// false when there is no row.
	Read(ctx context.Context, q string, args []any, n int, serial bool) (cells []Cell[TI], found bool, err error)
	// Invalid reports a request Cassandra refused as invalid (error code 0x2200).
	Invalid(err error) bool
}

// Unknown is the write Write settles: an outcome-unknown error's statements, pinned
// timestamp and whether it was a logged batch.
type Unknown struct {
	Statements []engine.Statement
	Timestamp  int64
	Logged     bool
}

// Write is the adapters' Write, options applied (see the settle package of either
// adapter for what it does). nil u or s is an error.
func Write[TI, C, S any](ctx context.Context, drv table.Driver[TI], s Session[TI], u *Unknown, cfg Config[C, S]) (Result[C], error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if cfg.Observer == nil {
		return write(ctx, drv, s, u, cfg)
	}
	start := time.Now()
	out, err := write(ctx, drv, s, u, cfg)
	n := 0
	if u != nil {
		n = len(u.Statements)
	}
	cfg.Observer.Settled(ctx, Report{Kind: KindWrite, Outcome: out.Outcome.String(), Statements: n,
		Elapsed: time.Since(start), Err: err})
	return out, err
}

// Lookup of s, each table described once per call.
func lookupOf[TI any](ctx context.Context, s Session[TI]) Lookup[TI] {
	type result struct {
		t   *table.Table[TI]
		err error
	}
	seen := map[[2]string]result{}
	return func(keyspace, name string) (*table.Table[TI], error) {
		k := [2]string{keyspace, name}
		if r, ok := seen[k]; ok {
			return r.t, r.err
		}
		t, err := s.Table(ctx, keyspace, name)
		seen[k] = result{t, err}
		return t, err
	}
}

// write is Write, options applied.
func write[TI, C, S any](ctx context.Context, drv table.Driver[TI], s Session[TI], u *Unknown, cfg Config[C, S]) (Result[C], error) {
	if s == nil || u == nil {
		return Result[C]{}, errors.New("settle: Settle needs a session and an outcome-unknown error")
	}
	out := Result[C]{Timestamp: u.Timestamp, Consistency: cfg.Consistency, Statements: make([]StatementResult, len(u.Statements))}
	ks := cfg.Keyspace
	if ks == "" {
		ks = s.Keyspace()
	}
	lookup := lookupOf(ctx, s)
	plans := make([]WritePlan, len(u.Statements))
	for i, st := range u.Statements {
		plan, err := PlanWrite(drv, ks, st, lookup, u.Timestamp)
		plans[i] = plan
		out.Statements[i] = StatementResult{Timestamp: plan.Timestamp, Skipped: plan.Skipped}
		if err != nil {
			out.Statements[i].Err = &UnsettleableError{Statement: i, CQL: st.CQL, Reason: err.Error()}
		}
	}
	if err := wait.Sleep(ctx, cfg.Delay); err != nil {
		return out, err
	}
	for i := range plans {
		ss := &out.Statements[i]
		if ss.Err != nil {
			continue
		}
		if err := readWriteTimes(ctx, drv, s, plans[i], ss); err != nil {
			return out, fmt.Errorf("settle: settle statement %d: %w", i+1, err)
		}
		if ss.Err != nil {
			ss.Err = &UnsettleableError{Statement: i, CQL: u.Statements[i].CQL, Reason: ss.Err.Error()}
		}
	}
	out.Outcome = Aggregate(out.Statements, plans, u.Logged)
	if out.Outcome == Unsettleable {
		for _, ss := range out.Statements {
			if ss.Err != nil {
				return out, ss.Err
			}
		}
		return out, &UnsettleableError{Reason: "no statements"}
	}
	return out, nil
}

// Aggregate is Result.Outcome (see there).
func Aggregate(sts []StatementResult, plans []WritePlan, logged bool) Outcome {
	unit := logged || len(plans) == 1 || onePartition(plans)
	var settled []Outcome
	for _, ss := range sts {
		if ss.Outcome == Unsettleable && !unit {
			return mixedOr(sts)
		}
		if ss.Outcome != Unsettleable {
			settled = append(settled, ss.Outcome)
		}
	}
	if len(settled) == 0 {
		return Unsettleable
	}
	if unit && slices.Contains(settled, Landed) {
		return Landed
	}
	for _, o := range settled[1:] {
		if o != settled[0] {
			return Mixed
		}
	}
	return settled[0]
}

func mixedOr(sts []StatementResult) Outcome {
	for _, ss := range sts {
		if ss.Outcome != Unsettleable {
			return Mixed
		}
	}
	return Unsettleable
}

// onePartition reports whether every statement writes the same partition of the same
// table: Cassandra applies them as one mutation, all or nothing on each replica.
func onePartition(plans []WritePlan) bool {
	for _, p := range plans {
		if p.Table == "" || p.Partition == nil || p.Keyspace != plans[0].Keyspace || p.Table != plans[0].Table ||
			!bytes.Equal(p.Partition, plans[0].Partition) {
			return false
		}
	}
	return true
}

// readWriteTimes reads the write times of plan's cells into ss and decides its outcome.
func readWriteTimes[TI any](ctx context.Context, drv table.Driver[TI], s Session[TI], plan WritePlan, ss *StatementResult) error {
	var times []int64
	for _, group := range []struct {
		cols   []string
		key    []KeyValue
		static bool
	}{{plan.Regular, plan.Key, false}, {plan.Static, plan.partitionKey(), true}} {
		if len(group.cols) == 0 {
			continue
		}
		cols := group.cols
		ts, err := selectWriteTimes(ctx, drv, s, plan, cols, group.key, group.static)
		if err != nil && s.Invalid(err) && plan.anyMulti(cols) {
			// Before Cassandra 5.0, WRITETIME of a non-frozen collection is invalid.
			var single []string
			for _, c := range cols {
				if plan.Multi[c] {
					ss.Skipped = append(ss.Skipped, c+": non-frozen collection (WRITETIME of one needs Cassandra 5.0)")
				} else {
					single = append(single, c)
				}
			}
			cols = single
			ts, err = nil, nil
			if len(cols) > 0 {
				ts, err = selectWriteTimes(ctx, drv, s, plan, cols, group.key, group.static)
			}
		}
		if err != nil {
			return err
		}
		ss.Columns = append(ss.Columns, cols...)
		times = append(times, ts...)
	}
	if len(ss.Columns) == 0 {
		ss.Err = errors.New("no written cell has a readable write time")
		return nil
	}
	ss.Outcome = JudgeWriteTimes(plan.Timestamp, times)
	for _, t := range times {
		ss.Newest = max(ss.Newest, t)
	}
	return nil
}

// JudgeWriteTimes decides a statement from the write times its cells carry (0: none).
func JudgeWriteTimes(ts int64, times []int64) Outcome {
	newer := false
	for _, t := range times {
		if t == ts {
			return Landed
		}
		newer = newer || t > ts
	}
	if newer {
		return Superseded
	}
	return NotVisible
}

// selectWriteTimes reads WRITETIME of cols in the row (or, for static columns, the
// partition) key names; a missing row reads as no write times.
func selectWriteTimes[TI any](ctx context.Context, drv table.Driver[TI], s Session[TI], plan WritePlan, cols []string, key []KeyValue, static bool) ([]int64, error) {
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "WRITETIME(" + cqltext.Quote(c) + ")"
	}
	where, vals := whereKey(key)
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(sel, ", "), cqltext.QuoteQualified(plan.Keyspace, plan.Table), where)
	if static {
		// Cassandra refuses clustering restrictions when only static columns are
		// selected; every row of the partition shows the same static cells.
		q += " LIMIT 1"
	}
	cells, found, err := s.Read(ctx, q, vals, len(cols), false)
	if err != nil || !found {
		return nil, err
	}
	var out []int64
	for _, c := range cells {
		ts, err := writeTimes(drv.TreeOf(c.Info), c.Data)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

func whereKey(key []KeyValue) (string, []any) {
	parts := make([]string, len(key))
	vals := make([]any, len(key))
	for i, k := range key {
		parts[i] = cqltext.Quote(k.Column) + " = ?"
		vals[i] = k.Value
	}
	return strings.Join(parts, " AND "), vals
}

// writeTimes decodes WRITETIME of a cell (bigint) or of a non-frozen collection or UDT
// (Cassandra 5.0: list<bigint>, one per element, null for absent UDT fields); null is
// none.
func writeTimes(typ cqltype.Type, data []byte) ([]int64, error) {
	if data == nil {
		return nil, nil
	}
	bad := fmt.Errorf("settle: WRITETIME returned %d bytes of %s", len(data), typ)
	switch {
	case typ.Kind == cqltype.Native && typ.Name == "bigint":
		if len(data) != 8 {
			return nil, bad
		}
		return []int64{int64(binary.BigEndian.Uint64(data))}, nil
	case (typ.Kind == cqltype.List || typ.Kind == cqltype.Set) && typ.Params[0].Kind == cqltype.Native && typ.Params[0].Name == "bigint":
		if len(data) < 4 {
			return nil, bad
		}
		n := int(int32(binary.BigEndian.Uint32(data)))
		rest := data[4:]
		var out []int64
		for range max(n, 0) {
			if len(rest) < 4 {
				return nil, bad
			}
			l := int(int32(binary.BigEndian.Uint32(rest)))
			rest = rest[4:]
			if l < 0 {
				continue // an absent UDT field
			}
			if l != 8 || len(rest) < 8 {
				return nil, bad
			}
			out = append(out, int64(binary.BigEndian.Uint64(rest)))
			rest = rest[8:]
		}
		if n < 0 || len(rest) != 0 {
			return nil, bad
		}
		return out, nil
	}
	return nil, fmt.Errorf("settle: WRITETIME returned %s", typ)
}
