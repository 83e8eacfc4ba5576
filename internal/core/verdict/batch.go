package verdict

import (
	"fmt"
	"strings"
)

// Batch judges a batch from its entries' verdicts (each already judged with its values
// by ForValues; values(i) returns entry i's values, or nil): idempotent iff every entry
// is — a list write another entry deletes at the batch's timestamp counts as repeatable
// (shadow.go) — and it is not a COUNTER batch. A batch of more than one entry writes
// more than one mutation; logged says it is a LOGGED batch.
func Batch(entries []Verdict, values func(i int) []any, in ValueInspector, counter, logged bool) Verdict {
	return BatchAt(entries, values, in, counter, logged, 0)
}

// BatchAt is Batch for an execution pinned at timestamp at (µs; 0: not known): a
// statement with its own USING TIMESTAMP is then compared with the others' at.
func BatchAt(entries []Verdict, values func(i int) []any, in ValueInspector, counter, logged bool, at int64) Verdict {
	v := Verdict{Idempotent: true, Kind: KindBatch, at: at}
	deleter := false
	for _, ev := range entries {
		deleter = deleter || ev.deleter
	}
	valuesOf := func(i int) []any {
		if values == nil {
			return nil
		}
		return values(i)
	}
	for i, ev := range entries {
		if !ev.Idempotent && deleter && len(ev.shadow) > 0 {
			ev = ev.dropShadowed(func(s shadowable) bool {
				for j, ej := range entries {
					for _, d := range ej.fps {
						if s.fp >= 0 && d.deletes(valuesOf(j), ev.fps[s.fp], valuesOf(i), s, in, at) {
							return true
						}
					}
				}
				return false
			}, "")
		}
		v.Statements += ev.Statements
		v.Writes = v.Writes || ev.Writes
		v.Conditional = v.Conditional || ev.Conditional
		v.multi = v.multi || ev.multi
		v.unbound = v.unbound || ev.unbound
		if !ev.Idempotent {
			v.Idempotent = false
			for _, r := range ev.Reasons {
				v.notIdempotent(fmt.Sprintf("statement %d: %s", i+1, r))
			}
		}
		for _, h := range ev.Hazards {
			v.hazard(fmt.Sprintf("statement %d: %s", i+1, h))
		}
	}
	if counter {
		v.notIdempotent("COUNTER batch")
	}
	v.multi = len(entries) > 1 || v.multi
	v.logged = logged
	return v
}

// MultiMutation: the text may write more than one mutation (a batch of several
// statements, an IN list in a write's WHERE). Cassandra sends mutations one by one, so an
// error about a later one does not prove the earlier ones were not applied.
func (v Verdict) MultiMutation() bool { return v.multi }

// LoggedBatch: a LOGGED batch (judged by Batch): all its Unavailable checks run before
// the batch log is written.
func (v Verdict) LoggedBatch() bool { return v.logged }

// Consulted lists the keyspaces whose schema metadata the verdict was judged against (a
// Versioned schema's Generation tells when it must be judged again).
func (v Verdict) Consulted() []string { return v.consulted }

// isListAssignment: the reasons Classify and ForValues give for assigning a whole value
// to a column that is (or may be) a non-frozen list begin with one of these.
func isListAssignment(r string) bool {
	for _, p := range []string{
		"non-frozen list assignment ",
		"list literal assigned to ",
		"function result assigned to ",
		"INSERT JSON assigns a list to ",
		"INSERT JSON value assigns a list to ",
		"non-empty value bound to non-frozen list ",
		"non-empty list bound to ",
		"non-frozen list ",
	} {
		if strings.HasPrefix(r, p) {
			return true
		}
	}
	return false
}

// ListAssignments returns the reasons of v that are a whole assignment to a column that
// is (or, without schema, may be) a non-frozen list: Cassandra keys each element by the
// server's clock, so a repeat appends another copy. cqlsafe vet reports these under
// its list-assignment rule; the other reasons under not-idempotent.
func (v Verdict) ListAssignments() []string {
	var out []string
	for _, r := range v.Reasons {
		if isListAssignment(r) {
			out = append(out, r)
		}
	}
	return out
}
