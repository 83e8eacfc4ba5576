package main

import (
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/table"
)

// A key transform on the command line: one --map NEWCOL=EXPR per new key column that is
// not a plain copy. EXPR is one of
//
//	OLDCOL                copy the old column's value (types must match)
//	sortable(OLDCOL)      an integer, or text holding one in decimal (zero padding and a
//	                      sign allowed), re-encoded as clientid.SortableInt64: fixed width,
//	                      string order = numeric order (field report 5: 10-digit → 19)
//	reverse_time(OLDCOL)  a timestamp as clientid.ReverseTime: newer sorts first
//
// A new key column without --map is copied from the old column of the same name.
const mapHelp = `--map NEWCOL=EXPR, once per new key column that is not a copy of the old column of
the same name. EXPR: OLDCOL (copy), sortable(OLDCOL) (an integer, or decimal text such as
"0000012345", as clientid.SortableInt64: 19 digits, string order = numeric order),
reverse_time(OLDCOL) (a timestamp as clientid.ReverseTime: newer first)`

// keyMap is a --map flag: repeatable.
type keyMap []string

func (k *keyMap) String() string     { return strings.Join(*k, ",") }
func (k *keyMap) Set(s string) error { *k = append(*k, s); return nil }

// mapping is one new key column's source.
type mapping struct {
	newCol, oldCol, fn string // fn: "", "sortable", "reverse_time"
}

// parseTransform builds the Transform from --map specs, checked against both tables
// before anything is read.
func parseTransform(specs []string, old, nw *table.Table) (keymigrate.Transform, []mapping, error) {
	given := map[string]mapping{}
	for _, spec := range specs {
		name, expr, ok := strings.Cut(spec, "=")
		name, expr = strings.TrimSpace(name), strings.TrimSpace(expr)
		if !ok || name == "" || expr == "" {
			return nil, nil, fmt.Errorf("--map %q: want NEWCOL=EXPR", spec)
		}
		mp := mapping{newCol: name, oldCol: expr}
		if open := strings.IndexByte(expr, '('); open >= 0 {
			if !strings.HasSuffix(expr, ")") {
				return nil, nil, fmt.Errorf("--map %q: unclosed (", spec)
			}
			mp.fn, mp.oldCol = strings.ToLower(strings.TrimSpace(expr[:open])), strings.TrimSpace(expr[open+1:len(expr)-1])
			if mp.fn != "sortable" && mp.fn != "reverse_time" {
				return nil, nil, fmt.Errorf("--map %q: unknown function %q (sortable, reverse_time)", spec, mp.fn)
			}
		}
		if _, dup := given[name]; dup {
			return nil, nil, fmt.Errorf("--map: %s given twice", name)
		}
		given[name] = mp
	}
	var maps []mapping
	for _, c := range nw.KeyColumns() {
		mp, ok := given[c.Name]
		if !ok {
			mp = mapping{newCol: c.Name, oldCol: c.Name}
		}
		delete(given, c.Name)
		oc, ok := old.Column(mp.oldCol)
		if !ok {
			return nil, nil, fmt.Errorf("--map %s: %s.%s has no column %q", c.Name, old.Keyspace, old.Name, mp.oldCol)
		}
		switch mp.fn {
		case "":
			if oc.CQLType != c.CQLType {
				return nil, nil, fmt.Errorf("--map %s=%s: %s is %s, %s is %s: give a function", c.Name, mp.oldCol, mp.oldCol, oc.CQLType, c.Name, c.CQLType)
			}
		case "sortable":
			if !isText(c.Type) || !(isText(oc.Type) || isInteger(oc.Type)) {
				return nil, nil, fmt.Errorf("--map %s=sortable(%s): wants an integer or text column into a text column, not %s into %s", c.Name, mp.oldCol, oc.CQLType, c.CQLType)
			}
		case "reverse_time":
			if !isText(c.Type) || oc.Type.Type() != gocql.TypeTimestamp {
				return nil, nil, fmt.Errorf("--map %s=reverse_time(%s): wants a timestamp column into a text column, not %s into %s", c.Name, mp.oldCol, oc.CQLType, c.CQLType)
			}
		}
		maps = append(maps, mp)
	}
	for name := range given {
		return nil, nil, fmt.Errorf("--map %s: not a key column of %s.%s", name, nw.Keyspace, nw.Name)
	}
	return func(row map[string]any) (map[string]any, error) {
		out := make(map[string]any, len(maps))
		for _, mp := range maps {
			v, err := apply(mp, row[mp.oldCol])
			if err != nil {
				return nil, err
			}
			out[mp.newCol] = v
		}
		return out, nil
	}, maps, nil
}

func (mp mapping) String() string {
	if mp.fn == "" {
		return mp.newCol + " = " + mp.oldCol
	}
	return fmt.Sprintf("%s = %s(%s)", mp.newCol, mp.fn, mp.oldCol)
}

func apply(mp mapping, v any) (any, error) {
	switch mp.fn {
	case "sortable":
		n, err := toInt64(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", mp.oldCol, err)
		}
		return clientid.SortableInt64(n), nil
	case "reverse_time":
		t, ok := v.(time.Time)
		if !ok {
			return nil, fmt.Errorf("%s: %T is not a timestamp", mp.oldCol, v)
		}
		return clientid.ReverseTime(t), nil
	}
	return v, nil
}

// toInt64 reads an integer value or decimal text.
func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a decimal int64", x)
		}
		return n, nil
	case *big.Int:
		if x == nil || !x.IsInt64() {
			return 0, fmt.Errorf("varint %v does not fit in int64", x)
		}
		return x.Int64(), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	}
	return 0, fmt.Errorf("%T is not an integer", v)
}

func isText(t gocql.TypeInfo) bool {
	switch t.Type() {
	case gocql.TypeText, gocql.TypeVarchar, gocql.TypeAscii:
		return true
	}
	return false
}

func isInteger(t gocql.TypeInfo) bool {
	switch t.Type() {
	case gocql.TypeInt, gocql.TypeBigInt, gocql.TypeSmallInt, gocql.TypeTinyInt, gocql.TypeVarint:
		return true
	}
	return false
}
