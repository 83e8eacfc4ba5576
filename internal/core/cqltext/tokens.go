package cqltext

import "strings"

// Helpers over token slices, shared by the packages that read CQL (retry's classifier,
// settle's statement mapping).

// TableName reads [keyspace.]table starting at t[i].
func TableName(t []Token, i int) (string, string) {
	if i < len(t) && t[i].Is("into") {
		i++
	}
	if i >= len(t) {
		return "", ""
	}
	if i+2 < len(t) && t[i+1].IsPunct(".") {
		return IdentName(t[i]), IdentName(t[i+2])
	}
	return "", IdentName(t[i])
}

func IdentName(t Token) string {
	switch t.Kind {
	case QIdent:
		return t.Text
	case Ident:
		return t.Lower
	}
	return ""
}

func IndexKeyword(t []Token, kw string, from int) int {
	depth := 0
	for i := from; i < len(t); i++ {
		switch {
		case t[i].opens():
			depth++
		case t[i].closes():
			depth--
		case depth == 0 && t[i].Is(kw):
			return i
		}
	}
	return -1
}

// SplitTop splits t at the punctuation sep outside brackets; an empty last part (a
// trailing sep, or no tokens) is left out.
func SplitTop(t []Token, sep string) [][]Token {
	out := SplitTopFunc(t, func(tok Token) bool { return tok.IsPunct(sep) })
	if n := len(out); len(out[n-1]) == 0 {
		out = out[:n-1]
	}
	return out
}

// SplitTopFunc splits t outside brackets at every token isSep reports; the part after
// the last separator is always returned, empty or not.
func SplitTopFunc(t []Token, isSep func(Token) bool) [][]Token {
	var out [][]Token
	depth, start := 0, 0
	for i, tok := range t {
		switch {
		case tok.opens():
			depth++
		case tok.closes():
			depth--
		case depth == 0 && isSep(tok):
			out = append(out, t[start:i])
			start = i + 1
		}
	}
	return append(out, t[start:])
}

func HasSeq(t []Token, kws ...string) bool {
outer:
	for i := 0; i+len(kws) <= len(t); i++ {
		for j, kw := range kws {
			if !t[i+j].Is(kw) {
				continue outer
			}
		}
		return true
	}
	return false
}

// Clause renders tokens back as compact CQL for a reason line (at most 60 bytes).
func Clause(t []Token) string {
	var b strings.Builder
	for i, tok := range t {
		if i > 0 && !(tok.IsPunct(",") || tok.IsPunct("]") || tok.IsPunct(")") || tok.IsPunct("[") || tok.IsPunct("(") || t[i-1].IsPunct("[") || t[i-1].IsPunct("(")) {
			b.WriteByte(' ')
		}
		switch tok.Kind {
		case String:
			b.WriteString("'" + strings.ReplaceAll(tok.Text, "'", "''") + "'")
		case QIdent:
			b.WriteString(Quote(tok.Text))
		default:
			b.WriteString(tok.Text)
		}
		if b.Len() > 60 {
			return b.String()[:57] + "…"
		}
	}
	return b.String()
}

// InParens returns the tokens between t[0] == "(" and its matching ")".
func InParens(t []Token) []Token {
	depth := 0
	for i, tok := range t {
		switch {
		case tok.opens():
			depth++
		case tok.closes():
			depth--
			if depth == 0 {
				return t[1:i]
			}
		}
	}
	return nil
}

// opens and closes report a bracket of any kind: (, [, { and their pairs.
func (t Token) opens() bool  { return t.IsPunct("(") || t.IsPunct("[") || t.IsPunct("{") }
func (t Token) closes() bool { return t.IsPunct(")") || t.IsPunct("]") || t.IsPunct("}") }
