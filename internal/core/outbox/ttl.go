package outbox

import (
	"math"
	"strconv"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

// Cassandra computes a cell's expiry from the time the write arrives (now + TTL), and
// at equal timestamps the cell that expires later wins. A replay hours after the first
// attempt, re-sent with the same TTL and timestamp, would therefore extend the cells'
// life or bring back cells that already expired. The code here shortens each TTL by the
// time elapsed since the first attempt, so the replayed cells expire when the first
// attempt's would have (to the second, never later).

// ttlKind says where a statement's TTL comes from.
type ttlKind int

const (
	ttlNone    ttlKind = iota // no TTL: a DELETE, a TTL of 0, a table without default
	ttlLiteral                // USING TTL 100
	ttlBind                   // USING TTL ? with a positive value
	ttlDefault                // the table's default_time_to_live (no TTL given, or a bound UNSET)
	ttlUnknown                // cannot tell: replayed as recorded
)

// ttlSite is one INSERT or UPDATE (or a DELETE) of a statement: a query holds one, a
// BEGIN BATCH text several.
type ttlSite struct {
	kind ttlKind
	ttl  int // seconds (ttlLiteral, ttlBind; ttlDefault once looked up)

	tok  int // index of the TTL literal or bind marker among the tokens
	bind int // index of the TTL among the bound values (ttlBind; ttlDefault with tok >= 0)

	// ttlDefault without a TTL in the text: where the clause goes and which (" USING TTL"
	// or " AND TTL" after a USING TIMESTAMP).
	at     int
	clause string

	ks, table string
}

// readTTLs finds the TTL of each write in cql. Statements that name no keyspace are in
// ks. A statement that does not lex is one ttlUnknown site; statements that cannot
// carry a TTL (SELECT, DDL) have none.
func readTTLs(cql string, values []any, unset any, ks string) ([]cqltext.Token, []ttlSite) {
	toks, err := cqltext.Lex(cql)
	if err != nil {
		return nil, []ttlSite{{kind: ttlUnknown}}
	}
	// Index among the bound values of each bind marker: one value per marker, in order.
	binds := make([]int, len(toks))
	n := 0
	for i, t := range toks {
		binds[i] = -1
		if t.Kind == cqltext.Bind {
			binds[i] = n
			n++
		}
	}
	if len(toks) == 0 {
		return toks, nil
	}
	if n != len(values) || !balanced(toks) {
		return toks, []ttlSite{{kind: ttlUnknown}} // Cassandra refuses it: do not guess
	}
	if toks[0].Is("begin") {
		return toks, batchTTLs(toks, binds, values, unset, ks)
	}
	end := len(toks)
	for end > 0 && toks[end-1].IsPunct(";") {
		end--
	}
	if end == 0 {
		return toks, nil
	}
	s := stmtTTL(toks[:end], binds, values, unset, ks)
	if s.kind == ttlNone && !isWrite(toks[0]) {
		return toks, nil
	}
	return toks, []ttlSite{s}
}

// balanced says whether every bracket in toks closes, in order.
func balanced(toks []cqltext.Token) bool {
	var open []string
	for _, t := range toks {
		switch {
		case t.IsPunct("("), t.IsPunct("["), t.IsPunct("{"):
			open = append(open, map[string]string{"(": ")", "[": "]", "{": "}"}[t.Text])
		case t.IsPunct(")"), t.IsPunct("]"), t.IsPunct("}"):
			if len(open) == 0 || open[len(open)-1] != t.Text {
				return false
			}
			open = open[:len(open)-1]
		}
	}
	return len(open) == 0
}

func isWrite(t cqltext.Token) bool { return t.Is("insert") || t.Is("update") || t.Is("delete") }

// batchTTLs reads BEGIN [UNLOGGED|LOGGED] BATCH [USING TIMESTAMP n] stmt [;] … APPLY BATCH.
// INSERT, UPDATE and DELETE are reserved words, so each top-level one starts a statement.
func batchTTLs(toks []cqltext.Token, binds []int, values []any, unset any, ks string) []ttlSite {
	apply := cqltext.IndexKeyword(toks, "apply", 0)
	if apply < 0 {
		return []ttlSite{{kind: ttlUnknown}}
	}
	var starts []int
	depth := 0
	for i := 0; i < apply; i++ {
		t := toks[i]
		switch {
		case t.IsPunct("(") || t.IsPunct("[") || t.IsPunct("{"):
			depth++
		case t.IsPunct(")") || t.IsPunct("]") || t.IsPunct("}"):
			depth--
		case depth == 0 && isWrite(t):
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return []ttlSite{{kind: ttlUnknown}}
	}
	var out []ttlSite
	for k, lo := range starts {
		hi := apply
		if k+1 < len(starts) {
			hi = starts[k+1]
		}
		end := hi
		for end > lo && toks[end-1].IsPunct(";") {
			end--
		}
		if end == lo {
			return []ttlSite{{kind: ttlUnknown}}
		}
		s := stmtTTL(toks[lo:end], binds[lo:end], values, unset, ks)
		// Token indexes are relative to the statement: make them absolute.
		if s.tok >= 0 {
			s.tok += lo
		}
		out = append(out, s)
	}
	return out
}

// stmtTTL reads the TTL of one INSERT, UPDATE or DELETE (t, without a trailing ';');
// binds[i] is the bound value index of t[i].
func stmtTTL(t []cqltext.Token, binds []int, values []any, unset any, ks string) ttlSite {
	unknown := ttlSite{kind: ttlUnknown, tok: -1}
	none := ttlSite{kind: ttlNone, tok: -1}
	var nameAt int // index of the first token of the table name
	switch {
	case t[0].Is("insert") && len(t) > 1 && t[1].Is("into"):
		nameAt = 2
	case t[0].Is("update"):
		nameAt = 1
	default:
		return none // DELETE has no TTL; anything else is not a write that takes one
	}
	tks, table := cqltext.TableName(t, nameAt)
	if table == "" {
		return unknown
	}
	nameEnd := nameAt // last token of the name
	if nameAt+2 < len(t) && t[nameAt+1].IsPunct(".") {
		if tks == "" {
			return unknown
		}
		nameEnd += 2
	} else {
		tks = ks
	}
	site := ttlSite{kind: ttlDefault, tok: -1, ks: tks, table: table}
	var using int
	if t[0].Is("update") {
		using = nameEnd + 1
		if using >= len(t) {
			return unknown
		}
		if !t[using].Is("using") {
			if !t[using].Is("set") {
				return unknown
			}
			site.at, site.clause = t[nameEnd].End, " USING TTL "
			return site
		}
	} else {
		using = cqltext.IndexKeyword(t, "using", nameEnd+1)
		if using < 0 {
			site.at, site.clause = t[len(t)-1].End, " USING TTL "
			return site
		}
	}
	// USING objective (AND objective)*, objective: TIMESTAMP value | TTL value.
	i := using + 1
	ttlTok := -1
	for {
		if i+1 >= len(t) || !(t[i].Is("timestamp") || t[i].Is("ttl")) {
			return unknown
		}
		if v := t[i+1]; v.Kind != cqltext.Number && v.Kind != cqltext.Bind {
			return unknown
		}
		if t[i].Is("ttl") {
			if ttlTok >= 0 {
				return unknown
			}
			ttlTok = i + 1
		}
		i += 2
		if i < len(t) && t[i].Is("and") {
			i++
			continue
		}
		break
	}
	if t[0].Is("update") && (i >= len(t) || !t[i].Is("set")) || t[0].Is("insert") && i != len(t) {
		return unknown
	}
	if ttlTok < 0 {
		site.at, site.clause = t[i-1].End, " AND TTL "
		return site
	}
	site.tok = ttlTok
	if v := t[ttlTok]; v.Kind == cqltext.Number {
		n, ok := parseTTL(v.Text)
		if !ok {
			return unknown
		}
		if n == 0 {
			return none // an explicit 0: no expiry
		}
		site.kind, site.ttl = ttlLiteral, n
		return site
	}
	site.bind = binds[ttlTok]
	v := values[site.bind] // readTTLs checked there is a value for every marker
	if v == unset {
		return site // UNSET inherits the table's default (ttlDefault, rewritten in place)
	}
	n, ok := ttlValue(v)
	if !ok {
		return unknown // null is refused by Cassandra; other types are not ours to guess
	}
	if n == 0 {
		return none
	}
	site.kind, site.ttl = ttlBind, n
	return site
}

// parseTTL reads a decimal TTL literal (Cassandra's TTL is a non-negative int).
func parseTTL(s string) (int, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int(n), err == nil
}

// ttlValue reads a bound TTL of a type the drivers marshal to a CQL int.
func ttlValue(v any) (int, bool) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int8:
		n = int64(x)
	case int16:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	case uint8:
		n = int64(x)
	case uint16:
		n = int64(x)
	case uint32:
		n = int64(x)
	case uint64:
		if x > math.MaxInt32 {
			return 0, false
		}
		n = int64(x)
	case string:
		p, ok := parseTTL(x)
		return p, ok
	default:
		return 0, false
	}
	if n < 0 || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// asType returns n as a value of the same Go type as like (n is smaller than like's
// value, or like is UNSET: then an int).
func asType(like any, n int) any {
	switch like.(type) {
	case int8:
		return int8(n)
	case int16:
		return int16(n)
	case int32:
		return int32(n)
	case int64:
		return int64(n)
	case uint8:
		return uint8(n)
	case uint16:
		return uint16(n)
	case uint32:
		return uint32(n)
	case uint64:
		return uint64(n)
	case string:
		return strconv.Itoa(n)
	}
	return n
}

// TTLResult is one statement as a replay sends it (ShortenTTL).
type TTLResult struct {
	CQL     string
	Values  []any
	Expired bool // every write in it had a TTL that ran out: sent with TTL 1 (see ShortenTTL)
	Changed bool // a TTL was shortened
	Unknown bool // a TTL could not be read: that part is sent as recorded
}

// ShortenTTL rewrites one statement so each TTL is what remains of it elapsed seconds
// after the first attempt. tableTTL returns a table's default_time_to_live; it is asked
// only for writes that give no TTL. A write whose TTL ran out is still sent, with TTL 1
// (the least Cassandra takes): had the first attempt applied, its cells would have
// expired, and an expired cell still hides every older value of its column, as a
// tombstone does; its nulls, element deletions and collection overwrites are tombstones,
// which never expire. Left out, the older values would show for good; sent with TTL 1,
// its own values are readable again for up to a second after the replay (one
// execution's had expired before it). Bound values are copied, never changed in place.
func ShortenTTL(cql string, values []any, unset any, ks string, elapsed int64, tableTTL func(ks, table string) (int, error)) (TTLResult, error) {
	res := TTLResult{CQL: cql, Values: values}
	toks, sites := readTTLs(cql, values, unset, ks)
	if len(sites) == 0 {
		return res, nil
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	newValues := append(make([]any, 0, len(values)), values...)
	expired := 0
	for _, s := range sites {
		switch s.kind {
		case ttlNone:
			continue
		case ttlUnknown:
			res.Unknown = true
			continue
		case ttlDefault:
			d, err := tableTTL(s.ks, s.table)
			if err != nil {
				return TTLResult{}, err
			}
			if d <= 0 {
				continue
			}
			s.ttl = d
		}
		remaining := int64(s.ttl) - elapsed
		if remaining <= 0 {
			remaining = 1
			expired++
		}
		res.Changed = true
		n := int(remaining)
		switch {
		case s.kind == ttlLiteral:
			edits = append(edits, edit{toks[s.tok].Pos, toks[s.tok].End, strconv.Itoa(n)})
		case s.tok >= 0: // a bound TTL, or a bound UNSET
			newValues[s.bind] = asType(values[s.bind], n)
		default:
			edits = append(edits, edit{s.at, s.at, s.clause + strconv.Itoa(n)})
		}
	}
	res.Expired = expired == len(sites)
	if !res.Changed {
		return res, nil
	}
	// Edits are in text order and do not overlap: apply them back to front. Each replaces
	// whole tokens or goes between two.
	out := cql
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		out = out[:e.from] + e.text + out[e.to:]
	}
	res.CQL = out
	if values != nil {
		res.Values = newValues
	}
	return res, nil
}

// ElapsedSeconds is the time from ts (µs since the epoch) to now in whole seconds,
// rounded up, so a shortened TTL never outlives the first attempt's. ok is false when
// ts is in the future (a clock ahead, or not a microsecond timestamp).
func ElapsedSeconds(ts int64, now int64) (int64, bool) {
	if ts > now {
		return 0, false
	}
	d := now - ts
	if d < 0 { // overflow: ts far in the past
		return math.MaxInt64 / 1_000_000, true
	}
	s := d / 1_000_000
	if d%1_000_000 != 0 {
		s++
	}
	return s, true
}
