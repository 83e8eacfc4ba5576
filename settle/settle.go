package settle

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/wait"
	"github.com/cqlsafe/cqlsafe/retry"
)

// This file settles writes whose outcome was unknown, after the fact, by reading what
// Cassandra holds: Settle compares the write times of the cells a pinned write wrote with
// its pinned timestamp; LWT reads a conditional write's row at SERIAL.

// Outcome is what Settle found about a pinned write whose outcome was unknown.
type Outcome int

// Outcomes of Settle. The zero value, Unsettleable, claims nothing.
const (
	// Unsettleable: the write's cells could not be mapped or read (see StatementResult.Err).
	Unsettleable Outcome = iota
	// Landed: a cell the write wrote carries exactly its timestamp. (A timestamp is taken
	// as this write's own: clientid clocks make a collision with another writer's cell
	// at the same microsecond unlikely, not impossible.)
	Landed
	// Superseded: no cell carries the write's timestamp, and some carry a newer one: a
	// newer write won those cells. Whether this write landed first cannot be told.
	Superseded
	// NotVisible: no cell the read saw carries the write's timestamp or a newer one. See
	// Settle for when the write may still land.
	NotVisible
	// Mixed: the statements of a batch that is not applied as one unit settled
	// differently; see Result.Statements.
	Mixed
)

var outcomeNames = [...]string{"unsettleable", "landed", "superseded", "not_visible", "mixed"}

func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// ErrUnsettleable is matched (errors.Is) by *UnsettleableError: a write Settle or
// LWT cannot map to cells it can read, so it gives no answer rather than a wrong
// one.
var ErrUnsettleable = errors.New("settle: cannot settle")

// UnsettleableError says why one statement cannot be settled: a DELETE (it leaves
// tombstones, which have no readable write time), a counter update (counters carry no
// client timestamp), a statement without every key column given as a value, INSERT
// JSON, an LWT given to Settle (use LWT), a table the schema metadata does not
// know, …
type UnsettleableError struct {
	Statement int // index in the write's statements (0 for a single statement)
	CQL       string
	Reason    string
}

func (e *UnsettleableError) Error() string {
	return fmt.Sprintf("settle: cannot settle statement %d (%s): %s", e.Statement+1, clip(e.CQL), e.Reason)
}

// Is makes errors.Is(err, ErrUnsettleable) true.
func (e *UnsettleableError) Is(target error) bool { return target == ErrUnsettleable }

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "…"
	}
	return s
}

// Option configures Write and LWT. An invalid value is an error from the call, before
// anything is read.
type Option func(*config) error

type config struct {
	consistency gocql.Consistency
	serial      gocql.SerialConsistency
	keyspace    string
	delay       time.Duration
	observer    Observer
}

// defaults are documented on Write and LWT.
func defaults() config {
	return config{consistency: gocql.Quorum, serial: gocql.Serial}
}

func options(opts []Option) (config, error) {
	cfg := defaults()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// At sets the consistency Write reads write times at (default QUORUM). ALL is the only
// level at which "not visible" speaks for every replica; see Write.
func At(c gocql.Consistency) Option {
	return func(cfg *config) error {
		if c == gocql.Any || c > gocql.LocalOne {
			return fmt.Errorf("settle: consistency %v cannot read", c)
		}
		cfg.consistency = c
		return nil
	}
}

// Serial sets the serial consistency LWT reads at: gocql.Serial (the default) or
// gocql.LocalSerial (when every write to the row uses LOCAL_SERIAL).
func Serial(c gocql.SerialConsistency) Option {
	return func(cfg *config) error {
		if c != gocql.Serial && c != gocql.LocalSerial {
			return fmt.Errorf("settle: serial consistency %v: want SERIAL or LOCAL_SERIAL", c)
		}
		cfg.serial = c
		return nil
	}
}

// Keyspace sets the keyspace of statements that name none (default: the session's
// keyspace). retry.OutcomeUnknownError does not record the keyspace a statement ran in;
// give it here when the writing session's keyspace differs from s's.
func Keyspace(ks string) Option {
	return func(cfg *config) error {
		if err := cqltext.ValidName(ks); err != nil {
			return fmt.Errorf("settle: keyspace: %w", err)
		}
		cfg.keyspace = ks
		return nil
	}
}

// After waits d (or until ctx is done) before reading. A request still in flight —
// queued in a proxy, a socket or a coordinator — can apply after a read that did not see
// it; waiting past the server's write_request_timeout (2 s by default; for an LWT its
// cas_contention_timeout, 1 s by default, counted from when the coordinator got the
// request) plus the network's delay since the last attempt was sent makes that moot.
func After(d time.Duration) Option {
	return func(cfg *config) error {
		if d < 0 {
			return fmt.Errorf("settle: negative wait %v", d)
		}
		cfg.delay = d
		return nil
	}
}

// Observer hears of every Write and LWT call (WithObserver), for observability: package
// otel's Instrumentation is one. Settled is called once per call that got past its
// options, when it returns, on the caller's goroutine, with the context the call was
// given (context.Background() for nil). Implementations must be safe for concurrent
// use.
type Observer interface {
	Settled(ctx context.Context, r Report)
}

// Report is one Write or LWT call, as an Observer hears of it.
type Report struct {
	Kind       string        // "write" (Write) or "lwt" (LWT)
	Outcome    string        // the Result's Outcome or the LWTResult's, as String names it
	Statements int           // the statements settled: the write's (Write), 1 (LWT)
	Elapsed    time.Duration // the call's duration, After's wait included
	Err        error         // the error the call returned
}

// Report kinds.
const (
	KindWrite = "write"
	KindLWT   = "lwt"
)

// WithObserver reports every call to o (see Observer); nil reports nothing (the
// default).
func WithObserver(o Observer) Option {
	return func(cfg *config) error {
		cfg.observer = o
		return nil
	}
}

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

// settlePlan is what Settle reads for one statement.
type settlePlan struct {
	keyspace, table string
	timestamp       int64
	key             []keyValue // the primary key (partition key columns first)
	nPartition      int        // how many of key are the partition key
	partition       []byte     // the partition key's serialized values, to compare statements
	regular         []string   // regular columns to read
	static          []string   // static columns to read (by partition)
	multi           map[string]bool
	skipped         []string
}

type keyValue struct {
	column string
	value  any
}

func (p settlePlan) partitionKey() []keyValue { return p.key[:min(p.nPartition, len(p.key))] }

func (p settlePlan) anyMulti(cols []string) bool {
	for _, c := range cols {
		if p.multi[c] {
			return true
		}
	}
	return false
}

type tableLookup func(keyspace, table string) (*gocql.TableMetadata, error)

// keyTerms maps the statement's primary key columns to the terms that give them: from
// WHERE (UPDATE, DELETE) or from VALUES (INSERT). Only equality names one row.
func (w *parsedWrite) keyTerms(tm *gocql.TableMetadata) (map[string]term, error) {
	given := map[string]term{}
	for _, r := range w.where {
		if r.op != "=" || r.column == "" {
			return nil, fmt.Errorf("WHERE restriction %q does not name one row (IN, ranges, tuples and token() are not settled)", cqltext.Clause(r.value.toks))
		}
		given[r.column] = r.value
	}
	if w.verb == "insert" {
		for _, cw := range w.columns {
			if isKey(tm, cw.column) {
				given[cw.column] = cw.value
			}
		}
	}
	return given, nil
}

// tableIn finds the metadata of the statement's table: in its own keyspace, else ks.
func (w *parsedWrite) tableIn(ks string, lookup tableLookup) (string, *gocql.TableMetadata, error) {
	if w.keyspace != "" {
		ks = w.keyspace
	}
	if ks == "" {
		return "", nil, errors.New("no keyspace: the statement names none and the session has none (Keyspace)")
	}
	tm, err := lookup(ks, w.table)
	if err != nil {
		return "", nil, fmt.Errorf("schema metadata of keyspace %s: %v", ks, err)
	}
	if tm == nil {
		return "", nil, fmt.Errorf("table %s.%s is not in the schema metadata", ks, w.table)
	}
	return ks, tm, nil
}

// planSettle maps one statement to the cells whose write times tell whether it landed.
// ks is the keyspace of statements that name none; pinned the write's timestamp. The
// plan names the statement's table and partition whenever they could be read, even
// with an error (so a DELETE can still show a batch writes one partition).
func planSettle(ks string, st retry.Statement, lookup tableLookup, pinned int64) (settlePlan, error) {
	plan := settlePlan{timestamp: pinned, multi: map[string]bool{}}
	w, err := parseWrite(st.CQL)
	if err != nil {
		return plan, err
	}
	ks, tm, err := w.tableIn(ks, lookup)
	if err != nil {
		return plan, err
	}
	plan.keyspace, plan.table = ks, w.table
	if w.json {
		return plan, errors.New("INSERT JSON: the written columns are in the document")
	}
	if w.timestamp != nil {
		v, unset, err := termValue(w.timestamp, gocql.NewNativeType(4, gocql.TypeBigInt, ""), st.Values)
		if err != nil {
			return plan, fmt.Errorf("USING TIMESTAMP: %v", err)
		}
		if !unset && v != nil {
			n, ok := toInt64(v)
			if !ok {
				return plan, fmt.Errorf("USING TIMESTAMP bound to %T", v)
			}
			plan.timestamp = n // the statement's own timestamp wins over the batch's or query's
		}
	}
	// The key: from WHERE (UPDATE, DELETE) or from VALUES (INSERT).
	given, err := w.keyTerms(tm)
	if err != nil {
		return plan, err
	}
	nKey := len(tm.PartitionKey)
	full := nKey + len(tm.ClusteringColumns)
	var partBytes []byte
	for i, cm := range append(slices.Clone(tm.PartitionKey), tm.ClusteringColumns...) {
		t, ok := given[cm.Name]
		if !ok {
			if i < nKey {
				return plan, fmt.Errorf("partition key column %s has no value in the statement", cm.Name)
			}
			full = i
			break
		}
		v, unset, err := termValue(&t, cm.Type, st.Values)
		if err != nil {
			return plan, fmt.Errorf("key column %s: %v", cm.Name, err)
		}
		if unset || isNull(v) {
			return plan, fmt.Errorf("key column %s is bound to null or unset", cm.Name)
		}
		plan.key = append(plan.key, keyValue{cm.Name, v})
		if i < nKey {
			b, err := gocql.Marshal(protoType(cm.Type), v)
			if err != nil {
				return plan, fmt.Errorf("key column %s: %v", cm.Name, err)
			}
			partBytes = binary.BigEndian.AppendUint32(partBytes, uint32(len(b)))
			partBytes = append(partBytes, b...)
		}
	}
	plan.nPartition = nKey
	plan.partition = partBytes
	switch {
	case w.conditional:
		return plan, errors.New("lightweight transaction: its cells may carry the Paxos ballot's timestamp rather than the pinned one (use LWT)")
	case w.verb == "delete":
		return plan, errors.New("DELETE leaves tombstones, which have no readable write time")
	}
	for _, cm := range tm.Columns {
		if cm.Type != nil && cm.Type.Type() == gocql.TypeCounter {
			return plan, fmt.Errorf("counter table (column %s): counter cells carry no client timestamp", cm.Name)
		}
	}
	for _, cw := range w.columns {
		if isKey(tm, cw.column) {
			continue
		}
		cm := tm.Columns[cw.column]
		if cm == nil {
			return plan, fmt.Errorf("column %s is not in table %s.%s", cw.column, ks, w.table)
		}
		if cw.value.bind >= len(st.Values) {
			return plan, fmt.Errorf("bind marker %d has no value (%d given)", cw.value.bind+1, len(st.Values))
		}
		why := cellSkip(cw, cm, st.Values)
		if why != "" {
			plan.skipped = append(plan.skipped, cw.column+": "+why)
			continue
		}
		if isMultiCell(cm) {
			plan.multi[cw.column] = true
		}
		list := &plan.regular
		if cm.Kind == gocql.ColumnStatic {
			list = &plan.static
		}
		if !slices.Contains(*list, cw.column) {
			*list = append(*list, cw.column)
		}
	}
	if len(plan.regular) > 0 && full < len(tm.PartitionKey)+len(tm.ClusteringColumns) {
		return plan, fmt.Errorf("clustering column %s has no value in the statement", tm.ClusteringColumns[full-nKey].Name)
	}
	if len(plan.regular)+len(plan.static) == 0 {
		return plan, errors.New("writes no cell with a readable write time (only key columns, NULLs, UNSETs, removals or empty collections)")
	}
	return plan, nil
}

// cellSkip says why a written column's write time says nothing about the statement
// ("" when it does).
func cellSkip(cw columnWrite, cm *gocql.ColumnMetadata, values []any) string {
	if cw.op == opRemove {
		return "element removal (tombstones)"
	}
	if len(cw.value.toks) == 1 && cw.value.toks[0].Is("null") {
		return "NULL (a tombstone)"
	}
	if cw.value.bind >= 0 {
		v := values[cw.value.bind] // planSettle checked the bound values are there
		switch {
		case v == gocql.UnsetValue:
			return "UNSET (nothing written)"
		case isNull(v):
			return "bound NULL (a tombstone)"
		case isMultiCell(cm) && (cw.op == opSet || cw.op == opAdd) && emptyCollection(v):
			return "empty collection (a tombstone, or nothing)"
		}
		return ""
	}
	if isMultiCell(cm) && (cw.op == opSet || cw.op == opAdd) && len(cw.value.toks) == 2 &&
		(cw.value.toks[0].IsPunct("[") || cw.value.toks[0].IsPunct("{")) {
		return "empty collection (a tombstone, or nothing)"
	}
	return ""
}

func isKey(tm *gocql.TableMetadata, col string) bool {
	cm := tm.Columns[col]
	return cm != nil && (cm.Kind == gocql.ColumnPartitionKey || cm.Kind == gocql.ColumnClusteringKey)
}

// isMultiCell: a non-frozen collection or UDT is one cell per element.
func isMultiCell(cm *gocql.ColumnMetadata) bool {
	if cm == nil || cm.Type == nil || strings.HasPrefix(strings.ToLower(cm.Validator), "frozen<") {
		return false
	}
	switch cm.Type.Type() {
	case gocql.TypeList, gocql.TypeSet, gocql.TypeMap, gocql.TypeUDT:
		return true
	}
	return false
}

// isNull: what gocql sends as NULL (nil, typed nil pointers, nil slices and maps).
func isNull(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		return rv.IsNil()
	}
	return false
}

func emptyCollection(v any) bool {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return true
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() == 0
	}
	return false
}

func toInt64(v any) (int64, bool) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return 0, false
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return int64(rv.Uint()), true
	}
	return 0, false
}

// protoType gives a type from schema metadata (whose protocol version gocql leaves 0,
// which would serialize collections in the v2 format) protocol v4.
func protoType(t gocql.TypeInfo) gocql.TypeInfo {
	switch x := t.(type) {
	case gocql.NativeType:
		return gocql.NewNativeType(4, x.Type(), x.Custom())
	case gocql.CollectionType:
		x.NativeType = gocql.NewNativeType(4, x.Type(), "")
		if x.Key != nil {
			x.Key = protoType(x.Key)
		}
		if x.Elem != nil {
			x.Elem = protoType(x.Elem)
		}
		return x
	}
	return t
}

// ---- parsing ----

// parsedWrite is the syntax of one INSERT, UPDATE or DELETE, as Settle and LWT
// need it.
type parsedWrite struct {
	verb        string // insert, update, delete
	keyspace    string // "" when the statement names none
	table       string
	columns     []columnWrite // INSERT's columns and values, UPDATE's assignments
	deletes     []string      // DELETE's whole columns (none: the row)
	where       []restriction // UPDATE's and DELETE's WHERE
	timestamp   *term         // USING TIMESTAMP
	json        bool
	conditional bool
	ifNotExists bool
	ifExists    bool
	conditions  []restriction // IF c op v …
}

// term is a value expression of the statement.
type term struct {
	toks []cqltext.Token
	raw  string // its source text
	bind int    // index among the statement's bind markers, -1 unless a single marker
}

type writeOp int

const (
	opSet     writeOp = iota // c = v (INSERT values too)
	opAdd                    // c = c + v, c = v + c
	opRemove                 // c = c - v
	opElement                // c[k] = v
	opField                  // c.f = v
	opOther                  // c = c + 1 on a counter, and anything else
)

type columnWrite struct {
	column string
	op     writeOp
	value  term
}

// restriction is `column op value` in WHERE or IF; column is "" when the left side is
// not a plain column (token(), a tuple, c[k], c.f).
type restriction struct {
	column string
	op     string // =, !=, <, in, contains, …
	value  term
}

// parseWrite reads one INSERT, UPDATE or DELETE; the error says why it is not one this
// file can map.
func parseWrite(cql string) (*parsedWrite, error) {
	toks, err := cqltext.Lex(cql)
	if err != nil {
		return nil, fmt.Errorf("not CQL: %v", err)
	}
	stmts := cqltext.Split(toks)
	if len(stmts) != 1 {
		return nil, fmt.Errorf("%d statements in one text", len(stmts))
	}
	t := stmts[0]
	binds := map[int]int{}
	for _, tok := range toks {
		if tok.Kind == cqltext.Bind {
			binds[tok.Pos] = len(binds)
		}
	}
	p := &parser{src: cql, t: t, binds: binds}
	w := &parsedWrite{}
	switch {
	case t[0].Is("insert"):
		w.verb = "insert"
		err = p.insert(w)
	case t[0].Is("update"):
		w.verb = "update"
		err = p.update(w)
	case t[0].Is("delete"):
		w.verb = "delete"
		err = p.delete(w)
	case t[0].Is("begin"):
		return nil, errors.New("a batch written as CQL text (send it as a gocql.Batch to settle each statement)")
	default:
		return nil, fmt.Errorf("not a write (%s)", t[0].Text)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

type parser struct {
	src   string
	t     []cqltext.Token
	binds map[int]int
}

func (p *parser) term(toks []cqltext.Token) term {
	tm := term{toks: toks, bind: -1}
	if len(toks) > 0 {
		tm.raw = p.src[toks[0].Pos:toks[len(toks)-1].End]
		if len(toks) == 1 && toks[0].Kind == cqltext.Bind {
			tm.bind = p.binds[toks[0].Pos]
		}
	}
	return tm
}

// table reads [keyspace.]table at t[i] and returns the index after it.
func (p *parser) table(w *parsedWrite, i int) (int, error) {
	t := p.t
	if i >= len(t) || cqltext.IdentName(t[i]) == "" {
		return i, errors.New("no table name")
	}
	if i+2 < len(t) && t[i+1].IsPunct(".") {
		if cqltext.IdentName(t[i+2]) == "" {
			return i, errors.New("no table name")
		}
		w.keyspace, w.table = cqltext.IdentName(t[i]), cqltext.IdentName(t[i+2])
		return i + 3, nil
	}
	w.table = cqltext.IdentName(t[i])
	return i + 1, nil
}

func (p *parser) insert(w *parsedWrite) error {
	t := p.t
	if len(t) < 2 || !t[1].Is("into") {
		return errors.New("INSERT without INTO")
	}
	i, err := p.table(w, 2)
	if err != nil {
		return err
	}
	if i < len(t) && t[i].Is("json") {
		w.json = true
		p.tail(w, i+2)
		return nil
	}
	if i >= len(t) || !t[i].IsPunct("(") {
		return errors.New("INSERT without a column list")
	}
	cols := cqltext.InParens(t[i:])
	i += len(cols) + 2
	if i+1 >= len(t) || !t[i].Is("values") || !t[i+1].IsPunct("(") {
		return errors.New("INSERT without VALUES")
	}
	vals := cqltext.InParens(t[i+1:])
	i += len(vals) + 3
	colList, valList := cqltext.SplitTop(cols, ","), cqltext.SplitTop(vals, ",")
	if len(colList) != len(valList) || len(colList) == 0 {
		return fmt.Errorf("INSERT lists %d columns and %d values", len(colList), len(valList))
	}
	for k, c := range colList {
		if len(c) != 1 || cqltext.IdentName(c[0]) == "" || len(valList[k]) == 0 {
			return errors.New("INSERT column list is not plain column names")
		}
		w.columns = append(w.columns, columnWrite{column: cqltext.IdentName(c[0]), op: opSet, value: p.term(valList[k])})
	}
	p.tail(w, i)
	return nil
}

// tail reads the clauses after the body: IF NOT EXISTS / IF EXISTS / IF conditions and
// USING (in either order).
func (p *parser) tail(w *parsedWrite, i int) {
	t := p.t
	for i < len(t) {
		switch {
		case t[i].Is("using"):
			i = p.using(w, i+1)
		case t[i].Is("if"):
			w.conditional = true
			switch {
			case i+2 < len(t) && t[i+1].Is("not") && t[i+2].Is("exists"):
				w.ifNotExists = true
				i += 3
			case i+1 < len(t) && t[i+1].Is("exists"):
				w.ifExists = true
				i += 2
			default:
				end := len(t)
				if u := cqltext.IndexKeyword(t, "using", i+1); u >= 0 {
					end = u
				}
				w.conditions = p.restrictions(t[i+1 : end])
				i = end
			}
		default:
			i++
		}
	}
}

// using reads TTL x AND TIMESTAMP y from t[i]; it returns the index after the clause.
func (p *parser) using(w *parsedWrite, i int) int {
	t := p.t
	for i < len(t) {
		switch {
		case (t[i].Is("timestamp") || t[i].Is("ttl")) && i+1 < len(t):
			j := i + 2
			if t[i+1].IsPunct("-") && j < len(t) {
				j++
			}
			if t[i].Is("timestamp") {
				tm := p.term(t[i+1 : j])
				w.timestamp = &tm
			}
			i = j
			if i < len(t) && t[i].Is("and") {
				i++
				continue
			}
			return i
		default:
			return i
		}
	}
	return i
}

// restrictions reads `a op x AND b op y …`.
func (p *parser) restrictions(t []cqltext.Token) []restriction {
	var out []restriction
	for _, r := range splitTopKeyword(t, "and") {
		if len(r) == 0 {
			continue
		}
		var col string
		opAt := 1
		if len(r) >= 2 && cqltext.IdentName(r[0]) != "" && !r[1].IsPunct("(") && !r[1].IsPunct("[") && !r[1].IsPunct(".") {
			col = cqltext.IdentName(r[0])
		} else {
			// token(k), (a, b), c[k], c.f: find the operator after the left side
			opAt = -1
			depth := 0
			for j, tok := range r {
				if tok.IsPunct("(") || tok.IsPunct("[") {
					depth++
				} else if tok.IsPunct(")") || tok.IsPunct("]") {
					depth--
				} else if depth == 0 && j > 0 && isOperator(tok) {
					opAt = j
					break
				}
			}
			if opAt < 0 {
				out = append(out, restriction{op: "?", value: p.term(r)})
				continue
			}
		}
		if opAt >= len(r) {
			out = append(out, restriction{column: col, op: "?", value: p.term(r)})
			continue
		}
		op := r[opAt].Text
		if r[opAt].Kind == cqltext.Ident {
			op = r[opAt].Lower
			if op == "contains" && opAt+1 < len(r) && r[opAt+1].Is("key") {
				opAt++
				op = "contains key"
			}
		}
		if !isOperator(r[opAt]) && op != "contains key" {
			op = "?"
		}
		out = append(out, restriction{column: col, op: op, value: p.term(r[opAt+1:])})
	}
	return out
}

func isOperator(t cqltext.Token) bool {
	if t.Kind == cqltext.Punct {
		switch t.Text {
		case "=", "!=", "<", ">", "<=", ">=":
			return true
		}
	}
	return t.Is("in") || t.Is("contains") || t.Is("like")
}

func (p *parser) update(w *parsedWrite) error {
	t := p.t
	i, err := p.table(w, 1)
	if err != nil {
		return err
	}
	if i < len(t) && t[i].Is("using") {
		i = p.using(w, i+1)
	}
	if i >= len(t) || !t[i].Is("set") {
		return errors.New("UPDATE without SET")
	}
	where := cqltext.IndexKeyword(t, "where", i)
	if where < 0 {
		return errors.New("UPDATE without WHERE")
	}
	for _, a := range cqltext.SplitTop(t[i+1:where], ",") {
		cw, err := p.assignment(a)
		if err != nil {
			return err
		}
		w.columns = append(w.columns, cw)
	}
	end := cqltext.IndexKeyword(t, "if", where)
	if end < 0 {
		end = len(t)
	}
	w.where = p.restrictions(t[where+1 : end])
	p.tail(w, end)
	return nil
}

// assignment reads one SET assignment.
func (p *parser) assignment(a []cqltext.Token) (columnWrite, error) {
	eq := -1
	for j, tok := range a {
		if tok.IsPunct("=") {
			eq = j
			break
		}
	}
	if eq < 1 || eq+1 >= len(a) || cqltext.IdentName(a[0]) == "" {
		return columnWrite{}, fmt.Errorf("assignment %q", cqltext.Clause(a))
	}
	col := cqltext.IdentName(a[0])
	rhs := a[eq+1:]
	cw := columnWrite{column: col, op: opSet, value: p.term(rhs)}
	switch {
	case eq > 1 && a[1].IsPunct("["):
		cw.op = opElement
	case eq > 1 && a[1].IsPunct("."):
		cw.op = opField
	case eq > 1:
		return columnWrite{}, fmt.Errorf("assignment %q", cqltext.Clause(a))
	case len(rhs) >= 3 && cqltext.IdentName(rhs[0]) == col && (rhs[1].IsPunct("+") || rhs[1].IsPunct("-")):
		cw.op, cw.value = opAdd, p.term(rhs[2:])
		if rhs[1].IsPunct("-") {
			cw.op = opRemove
		}
		if rhs[2].Kind == cqltext.Number {
			cw.op = opOther // c = c + 1: a counter
		}
	case len(rhs) >= 3 && cqltext.IdentName(rhs[len(rhs)-1]) == col && rhs[len(rhs)-2].IsPunct("+"):
		cw.op, cw.value = opAdd, p.term(rhs[:len(rhs)-2])
	}
	return cw, nil
}

func (p *parser) delete(w *parsedWrite) error {
	t := p.t
	from := cqltext.IndexKeyword(t, "from", 0)
	if from < 0 {
		return errors.New("DELETE without FROM")
	}
	for _, sel := range cqltext.SplitTop(t[1:from], ",") {
		if len(sel) == 0 {
			return errors.New("DELETE selection has an empty item")
		}
		if len(sel) == 1 && cqltext.IdentName(sel[0]) != "" {
			w.deletes = append(w.deletes, cqltext.IdentName(sel[0]))
			continue
		}
		w.columns = append(w.columns, columnWrite{column: cqltext.IdentName(sel[0]), op: opOther}) // c[k], c.f
	}
	i, err := p.table(w, from+1)
	if err != nil {
		return err
	}
	if i < len(t) && t[i].Is("using") {
		i = p.using(w, i+1)
	}
	if i >= len(t) || !t[i].Is("where") {
		return errors.New("DELETE without WHERE")
	}
	end := cqltext.IndexKeyword(t, "if", i)
	if end < 0 {
		end = len(t)
	}
	w.where = p.restrictions(t[i+1 : end])
	p.tail(w, end)
	return nil
}

// splitTopKeyword splits t at the keyword kw outside brackets.
func splitTopKeyword(t []cqltext.Token, kw string) [][]cqltext.Token {
	var out [][]cqltext.Token
	depth, start := 0, 0
	for i, tok := range t {
		switch {
		case tok.IsPunct("(") || tok.IsPunct("[") || tok.IsPunct("{"):
			depth++
		case tok.IsPunct(")") || tok.IsPunct("]") || tok.IsPunct("}"):
			depth--
		case depth == 0 && tok.Is(kw):
			out = append(out, t[start:i])
			start = i + 1
		}
	}
	return append(out, t[start:])
}

// termValue is the Go value a term puts in a column of type typ: the bound value, or a
// literal converted. unset reports an UNSET bound value.
func termValue(tm *term, typ gocql.TypeInfo, values []any) (v any, unset bool, err error) {
	if tm.bind >= 0 {
		if tm.bind >= len(values) {
			return nil, false, fmt.Errorf("bind marker %d has no value (%d given)", tm.bind+1, len(values))
		}
		v := values[tm.bind]
		return v, v == gocql.UnsetValue, nil
	}
	v, err = literalValue(tm, typ)
	return v, false, err
}

// literalValue converts a literal of the statement text to a Go value gocql binds as
// typ. Literals it does not convert (collections, tuples, functions, durations,
// decimals, …) are an error: the caller settles nothing rather than guess.
func literalValue(tm *term, typ gocql.TypeInfo) (any, error) {
	toks := tm.toks
	if len(toks) == 0 {
		return nil, errors.New("no value")
	}
	if len(toks) == 1 && toks[0].Is("null") {
		return nil, nil
	}
	for _, tok := range toks {
		if tok.Kind == cqltext.Bind || tok.IsPunct("(") || tok.IsPunct("[") || tok.IsPunct("{") {
			return nil, fmt.Errorf("value %q is not a literal it can read (bind it)", clip(tm.raw))
		}
	}
	if typ == nil {
		return nil, errors.New("column type unknown")
	}
	raw := strings.TrimSpace(tm.raw)
	str := len(toks) == 1 && toks[0].Kind == cqltext.String
	bad := fmt.Errorf("literal %q for a %s column is not one it can read (bind it)", clip(raw), typ)
	switch typ.Type() {
	case gocql.TypeVarchar, gocql.TypeText, gocql.TypeAscii, gocql.TypeInet, gocql.TypeDate:
		if str {
			return toks[0].Text, nil
		}
	case gocql.TypeInt, gocql.TypeBigInt, gocql.TypeSmallInt, gocql.TypeTinyInt, gocql.TypeCounter, gocql.TypeTimestamp:
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil && !str {
			return n, nil
		}
	case gocql.TypeVarint:
		if n, ok := new(big.Int).SetString(raw, 10); ok && !str {
			return n, nil
		}
	case gocql.TypeFloat, gocql.TypeDouble:
		if f, err := strconv.ParseFloat(raw, 64); err == nil && !str {
			if typ.Type() == gocql.TypeFloat {
				return float32(f), nil
			}
			return f, nil
		}
	case gocql.TypeBoolean:
		if len(toks) == 1 && (toks[0].Is("true") || toks[0].Is("false")) {
			return toks[0].Is("true"), nil
		}
	case gocql.TypeUUID, gocql.TypeTimeUUID:
		if u, err := gocql.ParseUUID(raw); err == nil && !str {
			return u, nil
		}
	case gocql.TypeBlob:
		if len(raw) > 2 && (raw[:2] == "0x" || raw[:2] == "0X") && !str {
			if b, err := hex.DecodeString(raw[2:]); err == nil {
				return b, nil
			}
		}
	}
	return nil, bad
}

// ---- lightweight transactions ----

// LWTOutcome is what LWT found about a conditional write.
type LWTOutcome int

// Outcomes of LWT. The zero value, LWTUnknown, claims nothing.
const (
	// LWTUnknown: the row does not tell: it shows the write's effect, but that effect
	// may have been there before the write (UPDATE … SET v = 1 … IF w = 2 on a row whose
	// v was already 1; an INSERT … IF NOT EXISTS of key columns only, which any insert
	// of the key would produce), or a value could not be compared reliably.
	LWTUnknown LWTOutcome = iota
	// LWTApplied: the row shows the write's effect — every column it sets holds the
	// value it set (a row DELETE: the row is gone) — and the write's own condition says
	// that effect was not there when it applied (IF NOT EXISTS; IF c = x where the
	// write sets c to something else; a DELETE's IF EXISTS). Another writer making the
	// identical change in between is the one case this cannot tell apart.
	LWTApplied
	// LWTNotApplied: the row contradicts the write's effect: a column it sets holds
	// another value, or the row it inserts or updates is absent, or the row it deletes
	// exists. Either the write did not apply, or a later write undid it; when every
	// writer of the row goes through conditions that protect the first (IF NOT EXISTS
	// claims, compare-and-set), it did not apply.
	LWTNotApplied
)

func (o LWTOutcome) String() string {
	switch o {
	case LWTApplied:
		return "applied"
	case LWTNotApplied:
		return "not_applied"
	}
	return "unknown"
}

// LWTResult is what LWT found.
type LWTResult struct {
	Outcome LWTOutcome
	Exists  bool   // the SERIAL read found the row
	Why     string // what decided, in one line
}

// LWT settles a conditional write (INSERT … IF NOT EXISTS, UPDATE … IF …, DELETE
// … IF …) whose outcome is unknown — a client timeout, a lost response, gocql's
// RequestErrCASWriteUnknown, a write timeout of write type CAS — by reading its row at
// SERIAL (Serial: LOCAL_SERIAL) and comparing it with the write's effect:
// LWTApplied, LWTNotApplied or LWTUnknown (see each). st is the statement as sent, with
// its values (an *retry.OutcomeUnknownError's Statements[0]).
//
// A read at SERIAL is a Paxos read: it first completes any round in progress on the
// partition (an accepted but uncommitted proposal is committed) or fences it out, so
// what it returns is the outcome, not a snapshot that an in-flight proposal could still
// change. Only rounds begun before the read are settled: the write's coordinator may
// begin a new one (a contended round is retried) until cas_contention_timeout (1 s by
// default) after it received the request, and a request still in transit has not begun
// one. Settle no earlier than that after the last attempt was sent (After), as a
// naive retry of the LWT must not be: a re-sent LWT that had applied finds its own
// write and reports applied = false.
//
// Settled: the full primary key given by values or literals; INSERT … IF NOT EXISTS;
// UPDATE assigning whole columns (c = v); DELETE of the row or of whole columns.
// Anything else — collection element updates, c = c + v, conditional batches, a
// partition-level condition — returns an *UnsettleableError before anything is read.
// Defaults: SERIAL, the session's keyspace (Keyspace), no wait.
func LWT(ctx context.Context, s *gocql.Session, st retry.Statement, opts ...Option) (LWTResult, error) {
	cfg, err := options(opts)
	if err != nil {
		return LWTResult{}, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if cfg.observer == nil {
		return lwt(ctx, s, st, cfg)
	}
	start := time.Now()
	out, err := lwt(ctx, s, st, cfg)
	cfg.observer.Settled(ctx, Report{Kind: KindLWT, Outcome: out.Outcome.String(), Statements: 1,
		Elapsed: time.Since(start), Err: err})
	return out, err
}

// lwt is LWT, options applied.
func lwt(ctx context.Context, s *gocql.Session, st retry.Statement, cfg config) (LWTResult, error) {
	if s == nil {
		return LWTResult{}, errors.New("settle: LWT needs a session")
	}
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
	plan, err := planLWT(ks, st, lookup)
	if err != nil {
		return LWTResult{}, &UnsettleableError{CQL: st.CQL, Reason: err.Error()}
	}
	if err := wait.Sleep(ctx, cfg.delay); err != nil {
		return LWTResult{}, err
	}
	row, exists, err := readSerial(ctx, s, gocql.Consistency(cfg.serial), plan)
	if err != nil {
		return LWTResult{}, fmt.Errorf("settle: settle LWT: serial read: %w", err)
	}
	return judgeLWT(plan, row, exists), nil
}

// lwtPlan is what LWT reads and expects.
type lwtPlan struct {
	keyspace, table string
	key             []keyValue
	rowDelete       bool          // the effect is the row's absence
	mustExist       bool          // the effect includes the row's existence (INSERT)
	expect          []expectation // columns and the values the write leaves in them
	changed         bool          // the condition rules out the effect being there before
}

type expectation struct {
	column string
	value  any // nil: null
	multi  bool
}

// planLWT maps a conditional write to its row and effect.
func planLWT(ks string, st retry.Statement, lookup tableLookup) (lwtPlan, error) {
	var plan lwtPlan
	w, err := parseWrite(st.CQL)
	if err != nil {
		return plan, err
	}
	if !w.conditional {
		return plan, errors.New("not a conditional write (use Settle for pinned writes)")
	}
	ks, tm, err := w.tableIn(ks, lookup)
	if err != nil {
		return plan, err
	}
	plan.keyspace, plan.table = ks, w.table
	if w.json {
		return plan, errors.New("INSERT JSON: the written columns are in the document")
	}
	given, err := w.keyTerms(tm)
	if err != nil {
		return plan, err
	}
	for _, cm := range append(slices.Clone(tm.PartitionKey), tm.ClusteringColumns...) {
		t, ok := given[cm.Name]
		if !ok {
			return plan, fmt.Errorf("primary key column %s has no value in the statement", cm.Name)
		}
		v, unset, err := termValue(&t, cm.Type, st.Values)
		if err != nil {
			return plan, fmt.Errorf("key column %s: %v", cm.Name, err)
		}
		if unset || isNull(v) {
			return plan, fmt.Errorf("key column %s is bound to null or unset", cm.Name)
		}
		plan.key = append(plan.key, keyValue{cm.Name, v})
	}
	// value is the value a term leaves in column c; skip reports UNSET.
	value := func(c string, t term) (any, bool, error) {
		cm := tm.Columns[c]
		if cm == nil {
			return nil, false, fmt.Errorf("column %s is not in table %s.%s", c, ks, w.table)
		}
		v, unset, err := termValue(&t, cm.Type, st.Values)
		if err != nil {
			return nil, false, fmt.Errorf("column %s: %v", c, err)
		}
		return v, unset, nil
	}
	switch w.verb {
	case "insert":
		if !w.ifNotExists {
			return plan, errors.New("INSERT with a condition other than IF NOT EXISTS")
		}
		plan.mustExist, plan.changed = true, true
		for _, cw := range w.columns {
			if isKey(tm, cw.column) {
				continue
			}
			v, unset, err := value(cw.column, cw.value)
			if err != nil {
				return plan, err
			}
			if !unset {
				plan.expect = append(plan.expect, expectation{cw.column, v, isMultiCell(tm.Columns[cw.column])})
			}
		}
	case "update":
		for _, cw := range w.columns {
			if cw.op != opSet {
				return plan, fmt.Errorf("assignment to %s is not a whole-column value: its effect cannot be read back", cw.column)
			}
			if isKey(tm, cw.column) {
				return plan, fmt.Errorf("assignment to key column %s", cw.column)
			}
			v, unset, err := value(cw.column, cw.value)
			if err != nil {
				return plan, err
			}
			if !unset {
				plan.expect = append(plan.expect, expectation{cw.column, v, isMultiCell(tm.Columns[cw.column])})
			}
		}
		if len(plan.expect) == 0 {
			return plan, errors.New("the UPDATE sets nothing")
		}
	case "delete":
		for _, cw := range w.columns {
			return plan, fmt.Errorf("element delete of %s: its effect cannot be read back", cw.column)
		}
		if len(w.deletes) == 0 {
			plan.rowDelete = true
		}
		for _, c := range w.deletes {
			if tm.Columns[c] == nil {
				return plan, fmt.Errorf("column %s is not in table %s.%s", c, ks, w.table)
			}
			plan.expect = append(plan.expect, expectation{c, nil, isMultiCell(tm.Columns[c])})
		}
		plan.changed = w.ifExists && plan.rowDelete
	}
	// Does the condition rule out the effect being there already?
	for _, c := range w.conditions {
		cm := tm.Columns[c.column]
		if c.column == "" || cm == nil {
			continue
		}
		cv, unset, err := termValue(&c.value, cm.Type, st.Values)
		if err != nil || unset {
			continue // a condition it cannot read just proves nothing
		}
		for _, e := range plan.expect {
			if e.column != c.column {
				continue
			}
			differs, known := valuesDiffer(protoType(cm.Type), cv, e.value, e.multi)
			switch {
			case !known:
			case c.op == "=" && differs, c.op == "!=" && !differs:
				plan.changed = true // before the write, c was not what the write leaves
			}
		}
		// A row DELETE whose condition needs a value in the row needs the row.
		if plan.rowDelete && !isNull(cv) && (c.op == "=" || c.op == "<" || c.op == ">" || c.op == "<=" || c.op == ">=" || c.op == "contains" || c.op == "contains key") {
			plan.changed = true
		}
	}
	return plan, nil
}

// valuesDiffer compares two Go values as typ serializes them; known is false when it
// cannot tell (a value typ does not serialize).
func valuesDiffer(typ gocql.TypeInfo, a, b any, multi bool) (differs, known bool) {
	ab, err1 := marshalCanonical(typ, a, multi)
	bb, err2 := marshalCanonical(typ, b, multi)
	if err1 != nil || err2 != nil {
		return false, false
	}
	if !bytes.Equal(ab, bb) || (ab == nil) != (bb == nil) {
		return true, reliable(typ, true)
	}
	return false, true
}

// marshalCanonical serializes v as typ, with a top-level set's or map's elements in
// byte order (Go maps iterate randomly; Cassandra returns them in comparator order), and
// an empty non-frozen collection as null (Cassandra stores it as no cells).
func marshalCanonical(typ gocql.TypeInfo, v any, multi bool) ([]byte, error) {
	if isNull(v) {
		return nil, nil
	}
	b, err := gocql.Marshal(typ, v)
	if err != nil {
		return nil, err
	}
	return canonical(typ, b, multi), nil
}

// canonical puts a serialized set's or map's elements in byte order; an empty
// non-frozen collection reads as null. Bytes it cannot parse are returned as they are.
func canonical(typ gocql.TypeInfo, b []byte, multi bool) []byte {
	if b == nil {
		return nil
	}
	t := typ.Type()
	if t != gocql.TypeSet && t != gocql.TypeMap && t != gocql.TypeList {
		return b
	}
	if len(b) < 4 {
		return b
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n == 0 && multi {
		return nil
	}
	if t == gocql.TypeList || n < 0 {
		return b
	}
	per := 1
	if t == gocql.TypeMap {
		per = 2
	}
	rest := b[4:]
	elems := make([][]byte, 0, n)
	for range n {
		start := rest
		size := 0
		for range per {
			if len(rest) < 4 {
				return b
			}
			l := int(int32(binary.BigEndian.Uint32(rest)))
			rest = rest[4:]
			if l > 0 {
				if len(rest) < l {
					return b
				}
				rest = rest[l:]
			}
			size += 4 + max(l, 0)
		}
		elems = append(elems, start[:size])
	}
	if len(rest) != 0 {
		return b
	}
	slices.SortFunc(elems, bytes.Compare)
	out := append([]byte(nil), b[:4]...)
	for _, e := range elems {
		out = append(out, e...)
	}
	return out
}

// reliable: unequal canonical bytes mean unequal values. Not so for sets and maps below
// the top level (their order is the writer's), UDTs and tuples (trailing null fields may
// be omitted) and custom types.
func reliable(typ gocql.TypeInfo, top bool) bool {
	switch x := typ.(type) {
	case gocql.NativeType:
		return x.Type() != gocql.TypeCustom
	case gocql.CollectionType:
		switch x.Type() {
		case gocql.TypeList:
			return reliable(x.Elem, false)
		case gocql.TypeSet:
			return top && reliable(x.Elem, false)
		case gocql.TypeMap:
			return top && reliable(x.Key, false) && reliable(x.Elem, false)
		}
	}
	return false
}

// rawCell keeps a column's serialized value and type as the read returned them.
type rawCell struct {
	info gocql.TypeInfo
	data []byte
}

func (c *rawCell) UnmarshalCQL(info gocql.TypeInfo, data []byte) error {
	c.info = info
	if data != nil {
		c.data = append(make([]byte, 0, len(data)), data...)
	}
	return nil
}

// readSerial reads the plan's columns (or, with none, its first key column) at cl.
func readSerial(ctx context.Context, s *gocql.Session, cl gocql.Consistency, plan lwtPlan) ([]rawCell, bool, error) {
	cols := make([]string, 0, len(plan.expect))
	for _, e := range plan.expect {
		cols = append(cols, cqltext.Quote(e.column))
	}
	if len(cols) == 0 {
		cols = append(cols, cqltext.Quote(plan.key[0].column))
	}
	cells := make([]rawCell, len(cols))
	dest := make([]any, len(cols))
	for i := range cells {
		dest[i] = &cells[i]
	}
	where, vals := whereKey(plan.key)
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(cols, ", "), cqltext.QuoteQualified(plan.keyspace, plan.table), where)
	err := s.Query(q, vals...).WithContext(ctx).Consistency(cl).Idempotent(true).Scan(dest...)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return cells, true, nil
}

// judgeLWT compares the row read at SERIAL with the plan's effect.
func judgeLWT(plan lwtPlan, row []rawCell, exists bool) LWTResult {
	out := LWTResult{Exists: exists}
	decide := func(why string) LWTResult {
		out.Outcome, out.Why = LWTUnknown, why+"; the condition does not rule out that it was there before"
		if plan.changed {
			out.Outcome, out.Why = LWTApplied, why
		}
		return out
	}
	switch {
	case plan.rowDelete && exists:
		out.Outcome, out.Why = LWTNotApplied, "the row it deletes exists"
		return out
	case plan.rowDelete:
		return decide("the row it deletes is absent")
	case plan.mustExist && !exists:
		out.Outcome, out.Why = LWTNotApplied, "the row it inserts is absent"
		return out
	case plan.mustExist && len(plan.expect) == 0:
		out.Outcome, out.Why = LWTUnknown, "the row exists, but the INSERT sets key columns only: any insert of the key leaves the same row"
		return out
	}
	for i, e := range plan.expect {
		var got rawCell
		if exists && i < len(row) {
			got = row[i]
		}
		if got.info == nil {
			if isNull(e.value) {
				continue // absent row: every column null
			}
			out.Outcome, out.Why = LWTNotApplied, fmt.Sprintf("%s is null, the write sets a value (the row is absent)", e.column)
			return out
		}
		want, err := marshalCanonical(got.info, e.value, e.multi)
		if err != nil {
			out.Outcome, out.Why = LWTUnknown, fmt.Sprintf("%s: the written value does not serialize as %s: %v", e.column, got.info, err)
			return out
		}
		have := canonical(got.info, got.data, e.multi)
		if bytes.Equal(want, have) && (want == nil) == (have == nil) {
			continue
		}
		if !reliable(got.info, true) {
			out.Outcome, out.Why = LWTUnknown, fmt.Sprintf("%s differs from the written value as serialized, which for %s does not prove the values differ", e.column, got.info)
			return out
		}
		out.Outcome, out.Why = LWTNotApplied, fmt.Sprintf("%s holds another value than the write sets", e.column)
		return out
	}
	return decide("every column the write sets holds the value it sets")
}
