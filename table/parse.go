package table

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// userType is a user-defined type as system_schema.types holds it: field names and the
// CQL text of each field's type.
type userType struct {
	fields []string
	types  []string
}

// typeParser turns a column's CQL type text (system_schema.columns.type, e.g.
// "frozen<list<frozen<address>>>") into a gocql TypeInfo. gocql v1.7.0's schema
// metadata leaves user-defined types as custom() and vectors as custom, which can be
// neither marshalled nor scanned; built from the text and the keyspace's user types,
// they can.
type typeParser struct {
	keyspace string
	udts     map[string]userType // by name as stored (unquoted)
	depth    int
}

var nativeTypes = map[string]gocql.Type{
	"ascii": gocql.TypeAscii, "bigint": gocql.TypeBigInt, "blob": gocql.TypeBlob, "boolean": gocql.TypeBoolean,
	"counter": gocql.TypeCounter, "date": gocql.TypeDate, "decimal": gocql.TypeDecimal, "double": gocql.TypeDouble,
	"duration": gocql.TypeDuration, "float": gocql.TypeFloat, "inet": gocql.TypeInet, "int": gocql.TypeInt,
	"smallint": gocql.TypeSmallInt, "text": gocql.TypeText, "varchar": gocql.TypeVarchar, "time": gocql.TypeTime,
	"timestamp": gocql.TypeTimestamp, "timeuuid": gocql.TypeTimeUUID, "tinyint": gocql.TypeTinyInt,
	"uuid": gocql.TypeUUID, "varint": gocql.TypeVarint,
}

// parse returns the TypeInfo of the CQL type text s.
func (p *typeParser) parse(s string) (gocql.TypeInfo, error) {
	toks := tokenize(s)
	ti, rest, err := p.parseToks(toks)
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", s, err)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("type %q: unexpected %q", s, rest[0])
	}
	return ti, nil
}

func (p *typeParser) parseToks(toks []string) (gocql.TypeInfo, []string, error) {
	if len(toks) == 0 {
		return nil, nil, fmt.Errorf("missing type")
	}
	if p.depth++; p.depth > 64 {
		return nil, nil, fmt.Errorf("type nested too deep")
	}
	defer func() { p.depth-- }()
	name, rest := toks[0], toks[1:]
	quoted := strings.HasPrefix(name, `"`)
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
			return nil, nil, fmt.Errorf("unbalanced <>")
		}
		args = append(args, rest[start:i])
		rest = rest[i+1:]
	}
	sub := func(i int) (gocql.TypeInfo, error) {
		ti, left, err := p.parseToks(args[i])
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("unexpected %q", left[0])
		}
		return ti, err
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
				return nil, nil, err
			}
			ti, err := sub(0)
			return ti, rest, err
		case "list", "set":
			if err := want(1); err != nil {
				return nil, nil, err
			}
			elem, err := sub(0)
			typ := gocql.TypeList
			if lower == "set" {
				typ = gocql.TypeSet
			}
			return gocql.CollectionType{NativeType: gocql.NewNativeType(protoVersion, typ, ""), Elem: elem}, rest, err
		case "map":
			if err := want(2); err != nil {
				return nil, nil, err
			}
			key, err := sub(0)
			if err != nil {
				return nil, nil, err
			}
			elem, err := sub(1)
			return gocql.CollectionType{NativeType: gocql.NewNativeType(protoVersion, gocql.TypeMap, ""), Key: key, Elem: elem}, rest, err
		case "tuple":
			out := gocql.TupleTypeInfo{NativeType: gocql.NewNativeType(protoVersion, gocql.TypeTuple, "")}
			for i := range args {
				e, err := sub(i)
				if err != nil {
					return nil, nil, err
				}
				out.Elems = append(out.Elems, e)
			}
			if len(out.Elems) == 0 {
				return nil, nil, fmt.Errorf("empty tuple")
			}
			return out, rest, nil
		case "vector":
			if err := want(2); err != nil {
				return nil, nil, err
			}
			elem, err := sub(0)
			if err != nil {
				return nil, nil, err
			}
			dim, err := strconv.Atoi(strings.Join(args[1], ""))
			if err != nil || dim < 1 {
				return nil, nil, fmt.Errorf("vector dimension %q", strings.Join(args[1], ""))
			}
			return cqlvalue.NewVectorType(protoVersion, elem, dim), rest, nil
		}
		if typ, ok := nativeTypes[lower]; ok && len(args) == 0 {
			return gocql.NewNativeType(protoVersion, typ, ""), rest, nil
		}
	}
	// A user-defined type: unquoted names are stored lower-case.
	ut, ok := p.udts[lower]
	if !ok || len(args) > 0 {
		return nil, nil, fmt.Errorf("unknown type %q", name)
	}
	out := gocql.UDTTypeInfo{NativeType: gocql.NewNativeType(protoVersion, gocql.TypeUDT, ""), KeySpace: p.keyspace, Name: lower}
	for i, f := range ut.fields {
		ti, err := p.parse(ut.types[i])
		if err != nil {
			return nil, nil, fmt.Errorf("field %s of %s: %w", f, lower, err)
		}
		out.Elements = append(out.Elements, gocql.UDTField{Name: f, Type: ti})
	}
	return out, rest, nil
}

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
