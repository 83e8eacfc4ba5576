package oracle

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// minimize shrinks a soundness failure: a single statement of a batch that still fails,
// then fewer columns, assignments or selections, then no setup rows; and renders the
// reproduction. Each try runs on fresh partitions.
func (r *runner) minimize(ctx context.Context, c *oracleCase, seed uint64, first verdict) (report, sig string) {
	attempt := 0
	last := first
	fails := func(st stmt, withSetup bool) bool {
		attempt++
		text, values := st.text()
		if text == "" || strings.Contains(text, "SET  WHERE") {
			return false
		}
		text, values = bindKey(text, values, partitionKey(c.tb, c.idx, attempt, 0))
		if rep, _ := r.decide(text, values, c.ts); !rep {
			return false
		}
		v := r.judge(ctx, c, st, withSetup, attempt)
		if v.diff != "" && v.err == nil && v.rejected == nil {
			last = v
			return true
		}
		return false
	}
	st := c.st
	if st.batch != "" && st.batch != "COUNTER" {
		for _, p := range st.parts {
			single := stmt{kind: st.kind, parts: []part{p}}
			if fails(single, true) {
				st = single
				break
			}
		}
	}
	if st.batch != "" {
		for i := len(st.parts) - 1; i >= 0 && len(st.parts) > 1; i-- {
			try := st
			try.parts = append(append([]part(nil), st.parts[:i]...), st.parts[i+1:]...)
			if fails(try, true) {
				st = try
			}
		}
	}
	for pi := range st.parts {
		for i := len(st.parts[pi].items) - 1; i >= 0; i-- {
			try := st
			try.parts = append([]part(nil), st.parts...)
			p := try.parts[pi]
			p.items = append(append([]item(nil), p.items[:i]...), p.items[i+1:]...)
			try.parts[pi] = p
			if fails(try, true) {
				st = try
			}
		}
	}
	withSetup := len(c.setup) > 0
	if withSetup && fails(st, false) {
		withSetup = false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "case %d, seed %d, kind %s: %s\n", c.idx, seed, c.st.kind, last.diff)
	if first.diff != last.diff {
		fmt.Fprintf(&b, "(before minimising: %s)\n", first.diff)
	}
	b.WriteString(r.repro(c, st, withSetup, seed))
	if last.interleave {
		text, values := c.w.text()
		text, values = bindKey(text, values, partitionKey(c.tb, c.idx, 0, 0))
		fmt.Fprintf(&b, "-- the other writer, at pinned timestamp %+d relative (once+W: stmt, W; repeated: stmt, W, stmt):\n%s%s\n", c.wOff, text, valuesNote(values))
	}
	fmt.Fprintf(&b, "reproduce: CQLSAFE_ORACLE_SEED=%d CQLSAFE_ORACLE_CASE=%d go test -run TestOracleStatements ./integration/oracle", seed, c.idx)
	if !diffColumn.MatchString(last.diff) {
		last.diff = first.diff // "1 rows vs 0 rows": the unminimised diff names the column
	}
	return b.String(), signature(c.tb, st, last, c.wOff)
}

var diffColumn = regexp.MustCompile(`row \d+ ([a-z0-9_]+)`)

// signature groups failures: which comparison differs, the differing column's type
// and the operation the minimised statement applies to it.
func signature(tb *table, st stmt, v verdict, wOff int64) string {
	cmp := v.diff
	if i := strings.Index(cmp, ":"); i > 0 {
		cmp = cmp[:i]
	}
	m := diffColumn.FindStringSubmatch(v.diff)
	if m == nil {
		return cmp + " | " + st.kind
	}
	col := tb.col(m[1])
	if col == nil {
		return cmp + " | " + st.kind + " | " + m[1]
	}
	ctype := col.t.String()
	if col.t.multiCell() {
		ctype = map[kind]string{kList: "list", kSet: "set", kMap: "map", kUDT: "udt"}[col.t.kind]
	} else if col.t.kind != kScalar {
		ctype = "frozen " + map[kind]string{kList: "list", kSet: "set", kMap: "map", kUDT: "udt", kTuple: "tuple", kVector: "vector"}[col.t.kind]
	}
	if col.role == roleStatic {
		ctype = "static " + ctype
	}
	op := st.kind
	for _, p := range st.parts {
		text, _ := p.render()
		for _, it := range p.items {
			name := strings.TrimLeft(it.text, `"`)
			if !strings.HasPrefix(name, col.name) || len(name) > len(col.name) && strings.ContainsAny(name[len(col.name):len(col.name)+1], "abcdefghijklmnopqrstuvwxyz0123456789_") {
				continue
			}
			rest := strings.TrimSpace(name[len(col.name):])
			switch {
			case strings.HasPrefix(text, "INSERT") && strings.Contains(text, " JSON "):
				op = "INSERT JSON c"
			case strings.HasPrefix(text, "INSERT"):
				op = "INSERT c"
			case strings.HasPrefix(text, "DELETE") && rest == "":
				op = "DELETE c"
			case strings.HasPrefix(text, "DELETE") && strings.HasPrefix(rest, "["):
				op = "DELETE c[e]"
			case strings.HasPrefix(text, "DELETE"):
				op = "DELETE c.f"
			case strings.HasPrefix(rest, "["):
				op = "c[e] = v"
			case strings.HasPrefix(rest, "."):
				op = "c.f = v"
			case strings.HasPrefix(rest, "= "+col.name+" +"):
				op = "c = c + v"
			case strings.HasPrefix(rest, "= "+col.name+" -"):
				op = "c = c - v"
			case strings.HasSuffix(rest, "+ "+col.name):
				op = "c = v + c"
			default:
				op = "c = v"
			}
		}
	}
	form := "literal"
	if text, values := st.text(); strings.Contains(text, "?") || len(values) > 0 {
		form = "bind"
	}
	if st.batch != "" {
		op += " (in a batch)"
	}
	w := ""
	if v.interleave {
		w = fmt.Sprintf(" (other writer at pinned %+dµs)", wOff)
	}
	return fmt.Sprintf("%s | %s column | %s | %s%s", cmp, ctype, op, form, w)
}

// repro renders schema, setup and statement for partition A of attempt 0.
func (r *runner) repro(c *oracleCase, st stmt, withSetup bool, seed uint64) string {
	var b strings.Builder
	for _, q := range c.tb.ddl(r.ks) {
		b.WriteString(q + ";\n")
	}
	k := partitionKey(c.tb, c.idx, 0, 0)
	if withSetup {
		fmt.Fprintf(&b, "-- given, at timestamp %d:\n", c.ts-50)
		for _, p := range c.setup {
			text, values := p.render()
			text, values = bindKey(text, values, k)
			b.WriteString(text + valuesNote(values) + ";\n")
		}
	}
	text, values := st.text()
	text, values = bindKey(text, values, k)
	how := ""
	if st.batch != "" && !st.textBatch {
		how = " (sent as a protocol batch)"
	}
	fmt.Fprintf(&b, "-- the statement%s, at pinned timestamp %d, run once vs. repeated:\n%s%s;\n", how, c.ts, text, valuesNote(values))
	rep, reasons := r.decide(text, values, c.ts)
	fmt.Fprintf(&b, "-- library: repeatable=%v %v\n", rep, reasons)
	return b.String()
}

func valuesNote(values []any) string {
	if len(values) == 0 {
		return ""
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprintf("%v", v)
		if _, ok := v.(string); ok {
			parts[i] = fmt.Sprintf("%q", v)
		}
		if v == unsetValue {
			parts[i] = "UNSET"
		}
	}
	return " -- values: [" + strings.Join(parts, ", ") + "]"
}
