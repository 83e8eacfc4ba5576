package verdict

import (
	"fmt"
	"slices"
)

// Kind is what a statement does.
type Kind int

// Statement kinds.
const (
	KindUnknown Kind = iota
	KindRead         // SELECT
	KindWrite        // INSERT, UPDATE, DELETE
	KindBatch        // BEGIN … APPLY BATCH
	KindSchema       // CREATE, ALTER, DROP
	KindOther        // TRUNCATE, USE, GRANT, …
)

func (k Kind) String() string {
	switch k {
	case KindRead:
		return "read"
	case KindWrite:
		return "write"
	case KindBatch:
		return "batch"
	case KindSchema:
		return "schema"
	case KindOther:
		return "other"
	}
	return "unknown"
}

// Verdict is Classify's judgement of one CQL text.
type Verdict struct {
	// Idempotent: executing the text twice with the same bound values and the same
	// pinned write timestamp has the effect of executing it once.
	Idempotent bool
	// Reasons say why it is not idempotent (empty when it is), one line each, naming the
	// clause: `counter or list "n = n + ?"`, `lightweight transaction (IF NOT EXISTS)`.
	Reasons []string
	// Hazards say what the text does wrong even when run once, whatever the retries:
	// a DELETE whose range covers rows it does not name (`c0 = uuid() AND c1 > ?`).
	// Each is also a reason.
	Hazards []string
	// Notes are facts that do not decide idempotence but matter to a caller, such as a
	// literal USING TIMESTAMP.
	Notes []string
	// Kind is what the text does; for several statements, KindBatch.
	Kind Kind
	// Writes is true when the text changes data: then its write timestamp must be pinned
	// before the first attempt, whatever the verdict (the executor does this).
	Writes bool
	// Conditional is true for lightweight transactions (IF …): they are never retried.
	Conditional bool
	// Statements counts the statements read (a batch counts its inner statements).
	Statements int

	// markers: the text's bind markers; unbound: ForValues was given no values for
	// them (a binder produces them per send: Session.Bind, Batch.Bind).
	markers int
	unbound bool

	// multi: the text may write more than one mutation (a batch of several statements,
	// an IN list in a write's WHERE): Cassandra sends mutations one by one, so an error
	// about a later one does not prove the earlier ones were not applied. logged: a
	// logged batch (all its Unavailable checks run before the batch log is written).
	multi, logged bool

	// binds are the bind markers whose value decides idempotence: a value bound whole
	// to a column that is (or, without schema, may be) a non-frozen list. See forValues.
	binds []bindCheck
	// fps are the footprints of the text's writes, shadow the reasons a DELETE of the
	// same batch may shadow, deleter whether some footprint deletes (shadow.go).
	fps     []footprint
	shadow  []shadowable
	deleter bool
	// keyspaces the verdict consulted schema metadata for (for cache validation).
	consulted []string
	// at: the timestamp the execution is pinned at (AtTimestamp), 0 when not known.
	at int64
}

// AtTimestamp returns the verdict of an execution pinned at ts (µs since the epoch; 0:
// not known). It matters only for a batch whose statements do not all write at ts: one
// with its own USING TIMESTAMP shadows, or is shadowed by, the others as its timestamp
// compares with ts — a list write is hidden by a DELETE of the same batch whose
// timestamp is not below the write's. Call it before ForValues, which judges bound keys
// and timestamps. The Policy pins the timestamp before it judges an execution, so Exec
// and ExecBatch judge with it.
//
// A verdict is judged at one timestamp: reasons dropped at it do not come back, so a
// verdict already judged at another one (and for which the timestamp matters: a list
// write and a DELETE in one batch) is returned not repeatable — judge the text again.
func (v Verdict) AtTimestamp(ts int64) Verdict {
	if v.at != 0 && ts != v.at && len(v.shadow) > 0 {
		return v.WithReason(fmt.Sprintf("verdict judged at timestamp %d already, asked for %d: judge the statement again", v.at, ts))
	}
	v.at = ts
	return v.unshadow(nil, nil)
}

// bindCheck is one bind marker whose bound value can make a statement non-idempotent.
type bindCheck struct {
	index  int    // position among the statement's bind markers, from 0
	column string // the column the value is assigned to ("" for INSERT JSON)
	known  bool   // schema says the column is a non-frozen list (else: unknown type)
	// json: the marker is INSERT JSON's document; listCols are the table's non-frozen
	// list columns (nil when the schema is unknown: any non-empty array counts).
	json     bool
	nowOnly  bool // fromJson(?): only a "now" in the document matters here
	listCols map[string]bool
	// kind: the column kinds of the table, for a schema that cannot list its non-frozen
	// list columns (nil without schema, or when listCols is known).
	kind func(column string) ColumnKind
	// fp is the footprint of the marker's statement (-1: none), role its column's role.
	fp   int
	role ColumnRole
	// look answers roles and key types for a bound JSON document's columns (nil: no
	// schema, or no footprint).
	look *classifier
}

// ColumnKind is what schema metadata says about a column, to refine Classify.
type ColumnKind int

// Column kinds.
const (
	ColumnUnknown ColumnKind = iota
	ColumnScalar
	ColumnCounter
	ColumnList
	ColumnSet
	ColumnMap
)

// Schema answers column kinds for ClassifyWithSchema. Table is as written in the
// statement (keyspace may be empty when the statement does not name one).
type Schema interface {
	ColumnKind(keyspace, table, column string) ColumnKind
}

func (v *Verdict) notIdempotent(reason string) {
	v.Idempotent = false
	for _, r := range v.Reasons {
		if r == reason {
			return
		}
	}
	v.Reasons = append(v.Reasons, reason)
}

func (v *Verdict) hazard(h string) {
	if !slices.Contains(v.Hazards, h) {
		v.Hazards = append(v.Hazards, h)
	}
}

func (v *Verdict) note(n string) {
	for _, x := range v.Notes {
		if x == n {
			return
		}
	}
	v.Notes = append(v.Notes, n)
}
