package settle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Result is what Write found.
type Result struct {
	// Outcome of the write as a whole. For one statement, its outcome. For a batch
	// applied as one unit (a logged batch, whose batch log replays every statement once
	// one applied; or an unlogged batch whose statements all write one partition of one
	// table, a single mutation): Landed when any statement landed, else the outcome the
	// settleable statements share (statements that cannot be settled are ignored), else
	// Mixed. For any other batch: the outcome every statement shares, else Mixed.
	// Unsettleable when no statement could be settled.
	Outcome     Outcome
	Timestamp   int64             // the write's pinned timestamp
	Consistency gocql.Consistency // what the write times were read at
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

// Settle finds out whether a pinned write whose outcome was unknown (e, as returned by
// Policy.Exec, Policy.ExecBatch or Do) landed: it reads, at QUORUM (At), the write
// times of the cells each statement wrote — WRITETIME of the columns an INSERT lists or
// an UPDATE assigns, of the row the statement's key values name — and compares them
// with the timestamp the statement was written with:
//
//   - Landed: a cell carries exactly that timestamp. Final: the write is in Cassandra.
//   - Superseded: none does, and some carry a newer one. A newer write won; whether
//     this one landed before it cannot be told, and does not matter to what the row
//     holds: re-applied with its pinned timestamp it would lose to the newer write again.
//   - NotVisible: no cell the read saw carries the timestamp or a newer one.
//
// NotVisible is not "did not happen". The write may still land, or may have landed and
// be hidden, when:
//
//   - it is still in flight: a request held in a network buffer or a coordinator's queue
//     is applied whenever it arrives, with its pinned timestamp (After waits);
//   - the read missed the replicas that have it: a write acknowledged by W of RF
//     replicas is seen by a read at R replicas only when R + W > RF. An unknown outcome
//     says nothing about W (it can be 1, or 0 with a hint), so only a read at ALL
//     speaks for every replica; at QUORUM with RF = 3, a write that reached one replica
//     can read as NotVisible;
//   - a hint holds it: a coordinator that could not reach a replica (down, or too slow
//     to acknowledge) keeps a hint and replays it when the replica is back — within
//     max_hint_window (3 h by default) of the replica going down — at the original
//     timestamp; even a read at ALL does not see a hint still on a coordinator;
//   - the batch log holds it: a logged batch whose batch log write succeeded is replayed
//     by the batch log's replicas (every ~10 s, for batches older than twice the write
//     timeout) even if none of its mutations arrived;
//   - it landed and is gone: a newer DELETE shadows its cells, or its TTL ran out.
//
// So NotVisible is final only when the read was at ALL and nothing can still deliver
// the write: no request in flight (the read came later than write_request_timeout plus
// the network's delay after the last attempt was sent), no hint for it on any
// coordinator (nodetool listpendinghints empty on every node, or hinted handoff off),
// and, for a logged batch, no batch log entry left (system.batches). Anything less
// means "not seen yet". Either way re-applying the write with its pinned timestamp
// (Policy.Exec with AtTimestamp(e.Timestamp), or an outbox replay) is safe for an
// idempotent write: if the original lands too, the cells are the same, and a newer
// write or delete still wins over both.
//
// Each statement of a batch is settled on its own (Result.Statements, in order);
// statements with their own USING TIMESTAMP are compared with theirs. Statements that
// cannot be mapped to readable cells are Unsettleable with an *UnsettleableError, never
// guessed: DELETEs, counter updates, LWTs (use LWT), INSERT JSON, statements
// whose key is not given by values (IN, token(), functions), statements that write no
// readable cell (only key columns, NULLs, element removals), batches written as CQL
// text. Non-frozen collections and UDTs are read element by element (Cassandra 5.0
// returns a write time per element); against an older Cassandra they are skipped and
// listed in Skipped. Column types come from s's schema metadata; statements that name
// no keyspace are in the session's keyspace (Keyspace).
//
// The error is non-nil when a read failed (with the Result so far), when e or s is
// nil, and — matching ErrUnsettleable, with the Result filled in — when no
// statement could be settled.
func Write(ctx context.Context, s *gocql.Session, e *retry.OutcomeUnknownError, opts ...Option) (Result, error) {
	cfg, err := options(opts)
	if err != nil {
		return Result{}, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if cfg.observer == nil {
		return write(ctx, s, e, cfg)
	}
	start := time.Now()
	out, err := write(ctx, s, e, cfg)
	n := 0
	if e != nil {
		n = len(e.Statements)
	}
	cfg.observer.Settled(ctx, Report{Kind: KindWrite, Outcome: out.Outcome.String(), Statements: n,
		Elapsed: time.Since(start), Err: err})
	return out, err
}

// write is Write, options applied.
func write(ctx context.Context, s *gocql.Session, e *retry.OutcomeUnknownError, cfg config) (Result, error) {
	if s == nil || e == nil {
		return Result{}, errors.New("settle: Settle needs a session and an outcome-unknown error")
	}
	out := Result{Timestamp: e.Timestamp, Consistency: cfg.consistency, Statements: make([]StatementResult, len(e.Statements))}
	ks := cfg.keyspace
	if ks == "" {
		ks = s.Query("").Keyspace()
	}
	lookup := func(keyspace, table string) (*gocql.TableMetadata, error) {
		km, err := s.KeyspaceMetadata(keyspace)
		if err != nil {
			return nil, err
		}
		return km.Tables[table], nil
	}
	plans := make([]settlePlan, len(e.Statements))
	for i, st := range e.Statements {
		plan, err := planSettle(ks, st, lookup, e.Timestamp)
		plans[i] = plan
		out.Statements[i] = StatementResult{Timestamp: plan.timestamp, Skipped: plan.skipped}
		if err != nil {
			out.Statements[i].Err = &UnsettleableError{Statement: i, CQL: st.CQL, Reason: err.Error()}
		}
	}
	if err := wait.Sleep(ctx, cfg.delay); err != nil {
		return out, err
	}
	for i := range plans {
		ss := &out.Statements[i]
		if ss.Err != nil {
			continue
		}
		if err := readWriteTimes(ctx, s, cfg.consistency, plans[i], ss); err != nil {
			return out, fmt.Errorf("settle: settle statement %d: %w", i+1, err)
		}
		if ss.Err != nil {
			ss.Err = &UnsettleableError{Statement: i, CQL: e.Statements[i].CQL, Reason: ss.Err.Error()}
		}
	}
	out.Outcome = aggregate(out.Statements, plans, e.Batch && e.BatchType == gocql.LoggedBatch)
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

// aggregate is Result.Outcome (see there).
func aggregate(sts []StatementResult, plans []settlePlan, logged bool) Outcome {
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
func onePartition(plans []settlePlan) bool {
	for _, p := range plans {
		if p.table == "" || p.partition == nil || p.keyspace != plans[0].keyspace || p.table != plans[0].table ||
			!bytes.Equal(p.partition, plans[0].partition) {
			return false
		}
	}
	return true
}

// readWriteTimes reads the write times of plan's cells into ss and decides its outcome.
func readWriteTimes(ctx context.Context, s *gocql.Session, cl gocql.Consistency, plan settlePlan, ss *StatementResult) error {
	var times []int64
	for _, group := range []struct {
		cols   []string
		key    []keyValue
		static bool
	}{{plan.regular, plan.key, false}, {plan.static, plan.partitionKey(), true}} {
		if len(group.cols) == 0 {
			continue
		}
		cols := group.cols
		ts, err := selectWriteTimes(ctx, s, cl, plan, cols, group.key, group.static)
		var re gocql.RequestError
		if err != nil && errors.As(err, &re) && re.Code() == gocql.ErrCodeInvalid && plan.anyMulti(cols) {
			// Before Cassandra 5.0, WRITETIME of a non-frozen collection is invalid.
			var single []string
			for _, c := range cols {
				if plan.multi[c] {
					ss.Skipped = append(ss.Skipped, c+": non-frozen collection (WRITETIME of one needs Cassandra 5.0)")
				} else {
					single = append(single, c)
				}
			}
			cols = single
			ts, err = nil, nil
			if len(cols) > 0 {
				ts, err = selectWriteTimes(ctx, s, cl, plan, cols, group.key, group.static)
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
	ss.Outcome = judgeWriteTimes(plan.timestamp, times)
	for _, t := range times {
		ss.Newest = max(ss.Newest, t)
	}
	return nil
}

// judgeWriteTimes decides a statement from the write times its cells carry (0: none).
func judgeWriteTimes(ts int64, times []int64) Outcome {
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
func selectWriteTimes(ctx context.Context, s *gocql.Session, cl gocql.Consistency, plan settlePlan, cols []string, key []keyValue, static bool) ([]int64, error) {
	sel := make([]string, len(cols))
	dest := make([]any, len(cols))
	wts := make([]writeTimes, len(cols))
	for i, c := range cols {
		sel[i] = "WRITETIME(" + cqltext.Quote(c) + ")"
		dest[i] = &wts[i]
	}
	where, vals := whereKey(key)
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(sel, ", "), cqltext.QuoteQualified(plan.keyspace, plan.table), where)
	if static {
		// Cassandra refuses clustering restrictions when only static columns are
		// selected; every row of the partition shows the same static cells.
		q += " LIMIT 1"
	}
	err := s.Query(q, vals...).WithContext(ctx).Consistency(cl).Idempotent(true).Scan(dest...)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, w := range wts {
		out = append(out, w...)
	}
	return out, nil
}

func whereKey(key []keyValue) (string, []any) {
	parts := make([]string, len(key))
	vals := make([]any, len(key))
	for i, k := range key {
		parts[i] = cqltext.Quote(k.column) + " = ?"
		vals[i] = k.value
	}
	return strings.Join(parts, " AND "), vals
}

// writeTimes decodes WRITETIME of a cell (bigint) or of a non-frozen collection or UDT
// (Cassandra 5.0: list<bigint>, one per element, null for absent UDT fields).
type writeTimes []int64

func (w *writeTimes) UnmarshalCQL(info gocql.TypeInfo, data []byte) error {
	if data == nil {
		return nil
	}
	switch info.Type() {
	case gocql.TypeBigInt:
		var v int64
		if err := gocql.Unmarshal(info, data, &v); err != nil {
			return err
		}
		*w = append(*w, v)
	case gocql.TypeList, gocql.TypeSet:
		var v []*int64
		if err := gocql.Unmarshal(info, data, &v); err != nil {
			return err
		}
		for _, t := range v {
			if t != nil {
				*w = append(*w, *t)
			}
		}
	default:
		return fmt.Errorf("settle: WRITETIME returned %s", info)
	}
	return nil
}
