package schema

import (
	"fmt"
	"strings"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Severity of a finding.
type Severity string

// Severities: an error defeats idempotent writes; a warning is a risk to review.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem Lint found.
type Finding struct {
	Statement int      // 1-based index of the statement in the text
	Line      int      // 1-based line where the statement (or the column) starts
	Severity  Severity // error or warning
	Rule      string   // short rule id: counter, list, unbucketed-time-series, not-idempotent, repeat-unsafe-ddl, syntax
	Message   string
}

func (f Finding) String() string {
	return fmt.Sprintf("line %d: %s [%s] %s", f.Line, f.Severity, f.Rule, f.Message)
}

// Lint reads CQL text (schema and statements) and reports what defeats idempotent,
// retry-safe writes:
//
//   - counter columns (increments cannot be retried safely);
//   - non-frozen list columns (append and prepend are not idempotent);
//   - time-series tables whose partition key has no time bucket while a timeuuid or
//     timestamp clusters the rows (partitions grow without bound);
//   - DDL that fails when applied twice (CREATE without IF NOT EXISTS, …);
//   - any other statement retry.Classify judges not idempotent (now(), uuid(), LWT, …).
//
// Findings are in text order. Text that does not lex is one "syntax" finding.
func Lint(cql string) []Finding {
	toks, err := cqltext.Lex(cql)
	if err != nil {
		var le *cqltext.LexError
		line := 1
		if ok := asLexError(err, &le); ok {
			line = lineOf(cql, le.Pos)
		}
		return []Finding{{Statement: 1, Line: line, Severity: SeverityError, Rule: "syntax", Message: err.Error()}}
	}
	var out []Finding
	for i, st := range cqltext.Split(toks) {
		text := cql[st[0].Pos:st[len(st)-1].End]
		line := lineOf(cql, st[0].Pos)
		add := func(sev Severity, rule, msg string, pos int) {
			out = append(out, Finding{Statement: i + 1, Line: lineOf(cql, pos), Severity: sev, Rule: rule, Message: msg})
		}
		isCreateTable := len(st) > 2 && st[0].Is("create") && (st[1].Is("table") || st[1].Is("columnfamily"))
		v := retry.Classify(text)
		if !v.Idempotent {
			rule := "not-idempotent"
			if v.Kind == retry.KindSchema {
				rule = "repeat-unsafe-ddl"
			}
			for _, r := range v.Reasons {
				out = append(out, Finding{Statement: i + 1, Line: line, Severity: SeverityError, Rule: rule, Message: r})
			}
		}
		if isCreateTable {
			lintTable(st, add)
		}
	}
	return out
}

func asLexError(err error, target **cqltext.LexError) bool {
	le, ok := err.(*cqltext.LexError)
	if ok {
		*target = le
	}
	return ok
}

func lineOf(s string, pos int) int {
	if pos > len(s) {
		pos = len(s)
	}
	return strings.Count(s[:pos], "\n") + 1
}

// lintTable checks a CREATE TABLE's column definitions and primary key.
func lintTable(st []cqltext.Token, add func(Severity, string, string, int)) {
	open := -1
	for i, t := range st {
		if t.IsPunct("(") {
			open = i
			break
		}
	}
	if open < 0 {
		return
	}
	// The body up to the matching ")".
	depth, end := 0, len(st)
	for i := open; i < len(st); i++ {
		if st[i].IsPunct("(") {
			depth++
		} else if st[i].IsPunct(")") {
			depth--
			if depth == 0 {
				end = i
				break
			}
		}
	}
	types := map[string]string{} // column → base type (lower), "frozen" when frozen
	var partition, clustering []string
	for _, def := range splitTop(st[open+1 : end]) {
		if len(def) == 0 {
			continue
		}
		if def[0].Is("primary") && len(def) > 2 && def[1].Is("key") {
			partition, clustering = primaryKey(def[2:])
			continue
		}
		if len(def) < 2 {
			continue
		}
		col := name(def[0])
		typ := strings.ToLower(def[1].Text)
		types[col] = typ
		switch typ {
		case "counter":
			add(SeverityError, "counter", fmt.Sprintf("counter column %q: increments are not idempotent and cannot be retried safely; record events and count them instead", col), def[0].Pos)
		case "list":
			add(SeverityError, "list", fmt.Sprintf("non-frozen list column %q: append and prepend are not idempotent; use frozen<list<…>>, a set, or a map keyed by a client-made id", col), def[0].Pos)
		}
		for j := 2; j+1 < len(def); j++ {
			if def[j].Is("primary") && def[j+1].Is("key") {
				partition = []string{col}
			}
		}
	}
	if len(partition) == 0 {
		return
	}
	timeClustered := false
	for _, c := range clustering {
		if t := types[c]; t == "timeuuid" || t == "timestamp" {
			timeClustered = true
		}
	}
	bucketed := false
	for _, p := range partition {
		l := strings.ToLower(p)
		for _, hint := range []string{"bucket", "day", "hour", "month", "week", "year", "date", "period", "shard"} {
			if strings.Contains(l, hint) {
				bucketed = true
			}
		}
		if t := types[p]; t == "date" || t == "timestamp" {
			bucketed = true
		}
	}
	if timeClustered && !bucketed {
		add(SeverityWarning, "unbucketed-time-series", fmt.Sprintf("partition key (%s) has no time bucket while rows cluster by time: partitions grow without bound (keep them under ~100k rows and 32 MB; add a bucket column, see clientid.Bucket)", strings.Join(partition, ", ")), st[0].Pos)
	}
}

// primaryKey reads "( (a, b), c, d )" or "( a, c )".
func primaryKey(t []cqltext.Token) (partition, clustering []string) {
	if len(t) < 2 || !t[0].IsPunct("(") {
		return nil, nil
	}
	inner := t[1:]
	if n := len(inner); n > 0 && inner[n-1].IsPunct(")") {
		inner = inner[:n-1]
	}
	for i, part := range splitTop(inner) {
		if len(part) == 0 {
			continue
		}
		if i == 0 && part[0].IsPunct("(") {
			for _, tok := range part {
				if tok.Kind == cqltext.Ident || tok.Kind == cqltext.QIdent {
					partition = append(partition, name(tok))
				}
			}
			continue
		}
		if i == 0 {
			partition = []string{name(part[0])}
			continue
		}
		clustering = append(clustering, name(part[0]))
	}
	return partition, clustering
}

func name(t cqltext.Token) string {
	if t.Kind == cqltext.QIdent {
		return t.Text
	}
	return t.Lower
}

func splitTop(t []cqltext.Token) [][]cqltext.Token {
	var out [][]cqltext.Token
	depth, start := 0, 0
	for i, tok := range t {
		switch {
		case tok.IsPunct("(") || tok.IsPunct("<"):
			depth++
		case tok.IsPunct(")") || tok.IsPunct(">"):
			depth--
		case depth == 0 && tok.IsPunct(","):
			out = append(out, t[start:i])
			start = i + 1
		}
	}
	if start < len(t) {
		out = append(out, t[start:])
	}
	return out
}
