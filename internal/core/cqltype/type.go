// Package cqltype is a CQL type as a driver-neutral tree: what a column's type text in
// system_schema ("frozen<map<text, frozen<address>>>") says, parsed once, for each
// driver adapter to map to its own type descriptions (gocql v1.7's TypeInfo structs,
// the v2 driver's TypeInfo interface).
package cqltype

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the shape of a Type.
type Kind int

// Kinds.
const (
	Native Kind = iota // a built-in scalar type: Name says which
	List               // Params[0]: the element type
	Set                // Params[0]: the element type
	Map                // Params[0], Params[1]: the key and value types
	Tuple              // Params: the element types
	UDT                // a user-defined type: Keyspace, Name; Fields and Params (their types)
	Vector             // Params[0]: the element type; Dim elements
)

// Type is one CQL type.
type Type struct {
	Kind     Kind
	Name     string // Native: the type's name, lower case; UDT: its name as stored
	Keyspace string // UDT: the keyspace that defines it
	Frozen   bool   // written frozen<…>
	Params   []Type
	Fields   []string // UDT: field names, in order, Params holding their types
	Dim      int      // Vector: its dimension
}

// Natives are the names of the built-in scalar types.
var Natives = []string{"ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "duration",
	"float", "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "uuid", "varchar", "varint"}

// UserType is a user-defined type as system_schema.types holds it: field names and the
// CQL text of each field's type.
type UserType struct {
	Fields []string
	Types  []string
}

// Parser parses the type texts of one keyspace, whose user-defined types it knows by
// name as stored (unquoted).
type Parser struct {
	Keyspace string
	UDTs     map[string]UserType
	depth    int
}

// Parse returns the Type of the CQL type text s.
func (p *Parser) Parse(s string) (Type, error) {
	toks := tokenize(s)
	t, rest, err := p.parseToks(toks)
	if err != nil {
		return Type{}, fmt.Errorf("type %q: %w", s, err)
	}
	if len(rest) > 0 {
		return Type{}, fmt.Errorf("type %q: unexpected %q", s, rest[0])
	}
	return t, nil
}

func (p *Parser) parseToks(toks []string) (Type, []string, error) {
	if len(toks) == 0 {
		return Type{}, nil, fmt.Errorf("missing type")
	}
	if p.depth++; p.depth > 64 {
		return Type{}, nil, fmt.Errorf("type nested too deep")
	}
	defer func() { p.depth-- }()
	name, rest := toks[0], toks[1:]
	quoted := strings.HasPrefix(name, `"`)
	if quoted && (len(name) < 2 || !strings.HasSuffix(name, `"`)) {
		return Type{}, nil, fmt.Errorf("unterminated quoted name %s", name)
	}
	if quoted {
		name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	}
	var args [][]string // raw token runs of the type arguments
	if len(rest) > 0 && rest[0] == "<" {
		depth, start := 0, 1
		i := 0
		for ; i < len(rest); i++ {
			switch rest[i] {
			case "<":
				depth++
			case ">":
				depth--
			case ",":
				if depth == 1 {
					args = append(args, rest[start:i])
					start = i + 1
				}
			}
			if depth == 0 {
				break
			}
		}
		if depth != 0 {
			return Type{}, nil, fmt.Errorf("unbalanced <>")
		}
		args = append(args, rest[start:i])
		rest = rest[i+1:]
	}
	sub := func(i int) (Type, error) {
		t, left, err := p.parseToks(args[i])
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("unexpected %q", left[0])
		}
		return t, err
	}
	want := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d type arguments, has %d", name, n, len(args))
		}
		return nil
	}
	lower := name
	if !quoted {
		lower = strings.ToLower(name)
	}
	if !quoted {
		switch lower {
		case "frozen":
			if err := want(1); err != nil {
				return Type{}, nil, err
			}
			t, err := sub(0)
			t.Frozen = true
			return t, rest, err
		case "list", "set":
			if err := want(1); err != nil {
				return Type{}, nil, err
			}
			elem, err := sub(0)
			kind := List
			if lower == "set" {
				kind = Set
			}
			return Type{Kind: kind, Params: []Type{elem}}, rest, err
		case "map":
			if err := want(2); err != nil {
				return Type{}, nil, err
			}
			key, err := sub(0)
			if err != nil {
				return Type{}, nil, err
			}
			elem, err := sub(1)
			return Type{Kind: Map, Params: []Type{key, elem}}, rest, err
		case "tuple":
			out := Type{Kind: Tuple}
			for i := range args {
				e, err := sub(i)
				if err != nil {
					return Type{}, nil, err
				}
				out.Params = append(out.Params, e)
			}
			if len(out.Params) == 0 {
				return Type{}, nil, fmt.Errorf("empty tuple")
			}
			return out, rest, nil
		case "vector":
			if err := want(2); err != nil {
				return Type{}, nil, err
			}
			elem, err := sub(0)
			if err != nil {
				return Type{}, nil, err
			}
			dim, err := strconv.Atoi(strings.Join(args[1], ""))
			if err != nil || dim < 1 {
				return Type{}, nil, fmt.Errorf("vector dimension %q", strings.Join(args[1], ""))
			}
			return Type{Kind: Vector, Params: []Type{elem}, Dim: dim}, rest, nil
		}
		if isNative(lower) && len(args) == 0 {
			return Type{Kind: Native, Name: lower}, rest, nil
		}
	}
	// A user-defined type: unquoted names are stored lower-case.
	ut, ok := p.UDTs[lower]
	if !ok || len(args) > 0 || len(ut.Fields) != len(ut.Types) {
		return Type{}, nil, fmt.Errorf("unknown type %q", name)
	}
	out := Type{Kind: UDT, Keyspace: p.Keyspace, Name: lower, Fields: ut.Fields}
	for i, f := range ut.Fields {
		t, err := p.Parse(ut.Types[i])
		if err != nil {
			return Type{}, nil, fmt.Errorf("field %s of %s: %w", f, lower, err)
		}
		out.Params = append(out.Params, t)
	}
	return out, rest, nil
}

func isNative(name string) bool {
	for _, n := range Natives {
		if n == name {
			return true
		}
	}
	return false
}

// String is the type's CQL text (a UDT by its keyspace-qualified, quoted name).
func (t Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t Type) write(b *strings.Builder) {
	if t.Frozen {
		b.WriteString("frozen<")
		defer b.WriteString(">")
	}
	params := func() {
		for i, p := range t.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			p.write(b)
		}
	}
	switch t.Kind {
	case Native:
		b.WriteString(t.Name)
	case List, Set, Map, Tuple:
		b.WriteString([...]string{List: "list", Set: "set", Map: "map", Tuple: "tuple"}[t.Kind])
		b.WriteString("<")
		params()
		b.WriteString(">")
	case Vector:
		b.WriteString("vector<")
		params()
		fmt.Fprintf(b, ", %d>", t.Dim)
	case UDT:
		fmt.Fprintf(b, "%s.%s", quote(t.Keyspace), quote(t.Name))
	}
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// tokenize splits CQL type text into names (quoted ones kept with their quotes),
// numbers and the punctuation < > ,.
func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '<' || c == '>' || c == ',':
			toks = append(toks, string(c))
			i++
		case c == '"':
			j := i + 1
			for j < len(s) {
				if s[j] == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, s[i:min(j+1, len(s))])
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n<>,\"", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}
