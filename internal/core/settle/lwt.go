package settle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
	"github.com/cqlsafe/cqlsafe/internal/core/table"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
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

// LWT is the adapters' LWT, options applied (see the settle package of either adapter
// for what it does).
func LWT[TI, C, S any](ctx context.Context, drv table.Driver[TI], s Session[TI], st engine.Statement, cfg Config[C, S]) (LWTResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if cfg.Observer == nil {
		return lwt(ctx, drv, s, st, cfg)
	}
	start := time.Now()
	out, err := lwt(ctx, drv, s, st, cfg)
	cfg.Observer.Settled(ctx, Report{Kind: KindLWT, Outcome: out.Outcome.String(), Statements: 1,
		Elapsed: time.Since(start), Err: err})
	return out, err
}

// lwt is LWT, options applied.
func lwt[TI, C, S any](ctx context.Context, drv table.Driver[TI], s Session[TI], st engine.Statement, cfg Config[C, S]) (LWTResult, error) {
	if s == nil {
		return LWTResult{}, errors.New("settle: LWT needs a session")
	}
	ks := cfg.Keyspace
	if ks == "" {
		ks = s.Keyspace()
	}
	plan, err := PlanLWT(drv, ks, st, lookupOf(ctx, s))
	if err != nil {
		return LWTResult{}, &UnsettleableError{CQL: st.CQL, Reason: err.Error()}
	}
	if err := wait.Sleep(ctx, cfg.Delay); err != nil {
		return LWTResult{}, err
	}
	row, exists, err := readSerial(ctx, s, plan)
	if err != nil {
		return LWTResult{}, fmt.Errorf("settle: settle LWT: serial read: %w", err)
	}
	return JudgeLWT(drv, plan, row, exists), nil
}

// LWTPlan is what LWT reads and expects.
type LWTPlan struct {
	Keyspace, Table string
	Key             []KeyValue
	RowDelete       bool          // the effect is the row's absence
	MustExist       bool          // the effect includes the row's existence (INSERT)
	Expect          []Expectation // columns and the values the write leaves in them
	Changed         bool          // the condition rules out the effect being there before
}

// Expectation is a column and the value a conditional write leaves in it.
type Expectation struct {
	Column string
	Value  any // nil: null
	Multi  bool
}

// PlanLWT maps a conditional write to its row and effect.
func PlanLWT[TI any](drv table.Driver[TI], ks string, st engine.Statement, lookup Lookup[TI]) (LWTPlan, error) {
	var plan LWTPlan
	w, err := parseWrite(st.CQL)
	if err != nil {
		return plan, err
	}
	if !w.conditional {
		return plan, errors.New("not a conditional write (use Settle for pinned writes)")
	}
	ks, tm, err := tableIn(w, ks, lookup)
	if err != nil {
		return plan, err
	}
	plan.Keyspace, plan.Table = ks, w.table
	if w.json {
		return plan, errors.New("INSERT JSON: the written columns are in the document")
	}
	given, err := keyTerms(w, tm)
	if err != nil {
		return plan, err
	}
	for _, cm := range tm.KeyColumns() {
		t, ok := given[cm.Name]
		if !ok {
			return plan, fmt.Errorf("primary key column %s has no value in the statement", cm.Name)
		}
		v, err := keyTermValue(drv, &t, cm, st.Values)
		if err != nil {
			return plan, err
		}
		plan.Key = append(plan.Key, KeyValue{cm.Name, v})
	}
	// value is the value a term leaves in column c; skip reports UNSET.
	value := func(c string, t term) (any, bool, error) {
		cm, ok := tm.Column(c)
		if !ok {
			return nil, false, fmt.Errorf("column %s is not in table %s.%s", c, ks, w.table)
		}
		v, unset, err := termValue(&t, drv.TreeOf(cm.Type), drv.Unset(), st.Values)
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
		plan.MustExist, plan.Changed = true, true
		for _, cw := range w.columns {
			if isKey(tm, cw.column) {
				continue
			}
			v, unset, err := value(cw.column, cw.value)
			if err != nil {
				return plan, err
			}
			if !unset {
				plan.Expect = append(plan.Expect, Expectation{cw.column, v, multiCell(tm, cw.column)})
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
				plan.Expect = append(plan.Expect, Expectation{cw.column, v, multiCell(tm, cw.column)})
			}
		}
		if len(plan.Expect) == 0 {
			return plan, errors.New("the UPDATE sets nothing")
		}
	case "delete":
		for _, cw := range w.columns {
			return plan, fmt.Errorf("element delete of %s: its effect cannot be read back", cw.column)
		}
		if len(w.deletes) == 0 {
			plan.RowDelete = true
		}
		for _, c := range w.deletes {
			if _, ok := tm.Column(c); !ok {
				return plan, fmt.Errorf("column %s is not in table %s.%s", c, ks, w.table)
			}
			plan.Expect = append(plan.Expect, Expectation{c, nil, multiCell(tm, c)})
		}
		plan.Changed = w.ifExists && plan.RowDelete
	}
	// Does the condition rule out the effect being there already?
	for _, c := range w.conditions {
		cm, ok := tm.Column(c.column)
		if c.column == "" || !ok {
			continue
		}
		cv, unset, err := termValue(&c.value, drv.TreeOf(cm.Type), drv.Unset(), st.Values)
		if err != nil || unset {
			continue // a condition it cannot read just proves nothing
		}
		for _, e := range plan.Expect {
			if e.Column != c.column {
				continue
			}
			differs, known := valuesDiffer(drv, cm.Type, cv, e.Value, e.Multi)
			switch {
			case !known:
			case c.op == "=" && differs, c.op == "!=" && !differs:
				plan.Changed = true // before the write, c was not what the write leaves
			}
		}
		// A row DELETE whose condition needs a value in the row needs the row.
		if plan.RowDelete && !isNull(cv) && (c.op == "=" || c.op == "<" || c.op == ">" || c.op == "<=" || c.op == ">=" || c.op == "contains" || c.op == "contains key") {
			plan.Changed = true
		}
	}
	return plan, nil
}

// multiCell: the column is a non-frozen collection or UDT, one cell per element.
func multiCell[TI any](tm *table.Table[TI], col string) bool {
	cm, ok := tm.Column(col)
	return ok && cm.Collection
}

// readSerial reads the plan's columns (or, with none, its first key column) at the
// serial consistency.
func readSerial[TI any](ctx context.Context, s Session[TI], plan LWTPlan) ([]Cell[TI], bool, error) {
	cols := make([]string, 0, len(plan.Expect))
	for _, e := range plan.Expect {
		cols = append(cols, cqltext.Quote(e.Column))
	}
	if len(cols) == 0 {
		cols = append(cols, cqltext.Quote(plan.Key[0].Column))
	}
	where, vals := whereKey(plan.Key)
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(cols, ", "), cqltext.QuoteQualified(plan.Keyspace, plan.Table), where)
	return s.Read(ctx, q, vals, len(cols), true)
}

// JudgeLWT compares the row read at SERIAL with the plan's effect.
func JudgeLWT[TI any](drv table.Driver[TI], plan LWTPlan, row []Cell[TI], exists bool) LWTResult {
	out := LWTResult{Exists: exists}
	decide := func(why string) LWTResult {
		out.Outcome, out.Why = LWTUnknown, why+"; the condition does not rule out that it was there before"
		if plan.Changed {
			out.Outcome, out.Why = LWTApplied, why
		}
		return out
	}
	switch {
	case plan.RowDelete && exists:
		out.Outcome, out.Why = LWTNotApplied, "the row it deletes exists"
		return out
	case plan.RowDelete:
		return decide("the row it deletes is absent")
	case plan.MustExist && !exists:
		out.Outcome, out.Why = LWTNotApplied, "the row it inserts is absent"
		return out
	case plan.MustExist && len(plan.Expect) == 0:
		out.Outcome, out.Why = LWTUnknown, "the row exists, but the INSERT sets key columns only: any insert of the key leaves the same row"
		return out
	}
	for i, e := range plan.Expect {
		if !exists || i >= len(row) {
			if isNull(e.Value) {
				continue // absent row: every column null
			}
			out.Outcome, out.Why = LWTNotApplied, fmt.Sprintf("%s is null, the write sets a value (the row is absent)", e.Column)
			return out
		}
		got := row[i]
		tree := drv.TreeOf(got.Info)
		want, err := marshalCanonical(drv, got.Info, e.Value, e.Multi)
		if err != nil {
			out.Outcome, out.Why = LWTUnknown, fmt.Sprintf("%s: the written value does not serialize as %s: %v", e.Column, tree, err)
			return out
		}
		have := canonical(tree, got.Data, e.Multi)
		if bytes.Equal(want, have) && (want == nil) == (have == nil) {
			continue
		}
		if !reliable(tree, true) {
			out.Outcome, out.Why = LWTUnknown, fmt.Sprintf("%s differs from the written value as serialized, which for %s does not prove the values differ", e.Column, tree)
			return out
		}
		out.Outcome, out.Why = LWTNotApplied, fmt.Sprintf("%s holds another value than the write sets", e.Column)
		return out
	}
	return decide("every column the write sets holds the value it sets")
}
