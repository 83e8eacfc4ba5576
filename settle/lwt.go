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
		v, err := keyTermValue(&t, cm, st.Values)
		if err != nil {
			return plan, err
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
