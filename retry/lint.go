package retry

import (
	"fmt"
	"strings"
)

// Lint is the verdict of cql as it stands in source code, with no bound values: what
// `cqlsafe lint` and `cqlsafe vet` report, so that the commands and the Policy judge a
// statement by one implementation.
//
// It is Repeatable(keyspace, cql, nil), except that a bind marker assigned whole to a
// column the Policy's schema calls a non-frozen list makes the statement not repeatable:
// any non-empty list bound there appends another copy on repeat, and code that binds
// only empty lists would not assign the column at all. Markers of columns of unknown
// type stay conditions (Verdict.ValueConditions), since most such columns are not lists.
func (p *Policy) Lint(keyspace, cql string) Verdict {
	v := p.Repeatable(keyspace, cql, nil)
	if !v.Idempotent || len(v.binds) == 0 {
		return v
	}
	for _, b := range v.binds {
		if b.known && !b.json {
			v = v.withReason(v.Reasons, fmt.Sprintf("non-frozen list %s assigned whole from bind marker %d (any non-empty list bound there appends another copy on repeat)", quoteName(b.column), b.index+1))
		}
	}
	return v
}

// isListAssignment: the reasons Classify and forValues give for assigning a whole value
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
