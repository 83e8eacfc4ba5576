// Package cqltext tokenizes CQL text and validates and quotes CQL identifiers. It is the
// machinery under retry.Classify and schema.Lint, and the quoting every package uses.
package cqltext

import (
	"fmt"
	"strings"
)

// Kind is a token's kind.
type Kind int

// Token kinds.
const (
	Ident  Kind = iota // unquoted identifier or keyword (Text as written; Lower lower-cased)
	QIdent             // "quoted identifier" (Text is the unescaped name)
	String             // 'string' or $$string$$ (Text is the unescaped value)
	Number             // 12, -1.5e3, 0xCAFE (blob), uuid literals are Ident/Number runs
	Bind               // ? or :name
	Punct              // one of ( ) , ; . = < > <= >= != + - * / [ ] { } :
)

// Token is one lexical token of a CQL statement.
type Token struct {
	Kind  Kind
	Text  string
	Lower string // lower-cased Text, for keyword matching (Ident only)
	Pos   int    // byte offset of the token's first byte in the input
	End   int    // byte offset just past the token in the input
}

// Is reports whether t is the unquoted keyword kw (case-insensitive; kw lower case).
func (t Token) Is(kw string) bool { return t.Kind == Ident && t.Lower == kw }

// IsPunct reports whether t is the punctuation p.
func (t Token) IsPunct(p string) bool { return t.Kind == Punct && t.Text == p }

// LexError reports input that is not CQL: an unterminated string, quoted identifier or
// comment, or a character CQL does not use.
type LexError struct {
	Pos    int
	Reason string
}

func (e *LexError) Error() string { return fmt.Sprintf("cql: offset %d: %s", e.Pos, e.Reason) }

// Lex splits CQL text into tokens, dropping white space and comments (-- and // to end
// of line, /* … */).
func Lex(s string) ([]Token, error) {
	var toks []Token
	i := 0
	// braces: the depth of { } — inside a map or UDT literal, `:` after a key or field
	// name separates it from its value ({'x':true} holds no marker :true).
	braces := 0
	// The previous iteration consumed exactly one token, white space or comment; a token
	// without End yet ends here.
	markEnd := func() {
		if n := len(toks); n > 0 && toks[n-1].End == 0 {
			toks[n-1].End = i
		}
	}
	for i < len(s) {
		markEnd()
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return toks, &LexError{i, "unterminated comment"}
			}
			i += 2 + end + 2
		case c == '\'':
			v, n, ok := quoted(s[i:], '\'')
			if !ok {
				return toks, &LexError{i, "unterminated string literal"}
			}
			toks = append(toks, Token{Kind: String, Text: v, Pos: i})
			i += n
		case c == '"':
			v, n, ok := quoted(s[i:], '"')
			if !ok {
				return toks, &LexError{i, "unterminated quoted identifier"}
			}
			toks = append(toks, Token{Kind: QIdent, Text: v, Pos: i})
			i += n
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			end := strings.Index(s[i+2:], "$$")
			if end < 0 {
				return toks, &LexError{i, "unterminated $$ string"}
			}
			toks = append(toks, Token{Kind: String, Text: s[i+2 : i+2+end], Pos: i})
			i += 2 + end + 2
		case c == '?':
			toks = append(toks, Token{Kind: Bind, Text: "?", Pos: i})
			i++
		case c == ':' && i+1 < len(s) && (isIdentStart(s[i+1]) || s[i+1] == '"') && !(braces > 0 && endsValue(toks)):
			j := i + 1
			if s[j] == '"' {
				_, n, ok := quoted(s[j:], '"')
				if !ok {
					return toks, &LexError{i, "unterminated quoted bind marker"}
				}
				j += n
			} else {
				for j < len(s) && isIdentPart(s[j]) {
					j++
				}
			}
			toks = append(toks, Token{Kind: Bind, Text: s[i:j], Pos: i})
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			j := i
			for j < len(s) && (isIdentPart(s[j]) || s[j] == '.' || s[j] == '-' && j > i && (s[j-1] == 'e' || s[j-1] == 'E') && !isHexRun(s[i:j])) {
				j++
			}
			toks = append(toks, Token{Kind: Number, Text: s[i:j], Pos: i})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, Token{Kind: Ident, Text: s[i:j], Lower: strings.ToLower(s[i:j]), Pos: i})
			i = j
		default:
			if i+1 < len(s) {
				two := s[i : i+2]
				if two == "<=" || two == ">=" || two == "!=" {
					toks = append(toks, Token{Kind: Punct, Text: two, Pos: i})
					i += 2
					continue
				}
			}
			if strings.IndexByte("(),;.=<>+-*/[]{}:", c) >= 0 {
				switch c {
				case '{':
					braces++
				case '}':
					braces = max(0, braces-1)
				}
				toks = append(toks, Token{Kind: Punct, Text: string(c), Pos: i})
				i++
				continue
			}
			return toks, &LexError{i, fmt.Sprintf("unexpected character %q", rune(c))}
		}
	}
	markEnd()
	return toks, nil
}

// endsValue: the last token can end a map key or a UDT field name (a literal, a name, a
// marker, a closing bracket), so a `:` after it is a separator, not a named marker.
func endsValue(toks []Token) bool {
	if len(toks) == 0 {
		return false
	}
	t := toks[len(toks)-1]
	switch t.Kind {
	case String, Number, Ident, QIdent, Bind:
		return true
	case Punct:
		return t.Text == ")" || t.Text == "]" || t.Text == "}"
	}
	return false
}

// quoted reads a q-quoted token at the start of s where a doubled q escapes q. It returns
// the unescaped value and the bytes consumed.
func quoted(s string, q byte) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i++
				continue
			}
			return b.String(), i + 1, true
		}
		b.WriteByte(s[i])
	}
	return "", 0, false
}

func isHexRun(s string) bool { return len(s) > 1 && (s[1] == 'x' || s[1] == 'X') }

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// Split divides tokens into statements at top-level semicolons, dropping empty ones. A
// BEGIN … APPLY BATCH is one statement, semicolons inside it included.
func Split(toks []Token) [][]Token {
	var out [][]Token
	start := 0
	inBatch := false
	for i, t := range toks {
		if i == start {
			inBatch = t.Is("begin")
		}
		if !t.IsPunct(";") {
			continue
		}
		if inBatch && !(i >= 2 && toks[i-2].Is("apply") && toks[i-1].Is("batch")) {
			continue
		}
		if i > start {
			out = append(out, toks[start:i])
		}
		start = i + 1
	}
	if start < len(toks) {
		out = append(out, toks[start:])
	}
	return out
}
