package retry

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
	return p.Repeatable(keyspace, cql, nil).ForSource(nil)
}
