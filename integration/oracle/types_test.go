package oracle

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// before50 reports whether the node runs Cassandra before 5.0, which has no vector
// type and cannot read WRITETIME or TTL of a non-frozen collection or UDT.
func before50() bool {
	major, err := strconv.Atoi(strings.SplitN(node.Version(), ".", 2)[0])
	return err == nil && major < 5
}

// kind is the shape of a CQL type.
type kind int

const (
	kScalar kind = iota
	kList
	kSet
	kMap
	kTuple
	kUDT
	kVector
	kCounter
)

// ctype is a CQL type. Types nested in collections, tuples and UDT fields are frozen,
// as Cassandra requires.
type ctype struct {
	kind   kind
	name   string // scalar name, or the UDT's name
	frozen bool   // collections and UDTs
	elems  []*ctype
	fields []string // UDT field names, parallel to elems
	dim    int      // vector dimension
}

var scalarNames = []string{"ascii", "bigint", "blob", "boolean", "date", "decimal", "double",
	"duration", "float", "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid",
	"tinyint", "uuid", "varint"}

// keyScalars may appear in primary keys, sets and map keys: all but duration.
var keyScalars = func() []string {
	var out []string
	for _, n := range scalarNames {
		if n != "duration" {
			out = append(out, n)
		}
	}
	return out
}()

func scalar(n string) *ctype { return &ctype{kind: kScalar, name: n} }

func (t *ctype) String() string {
	var s string
	switch t.kind {
	case kScalar:
		return t.name
	case kCounter:
		return "counter"
	case kVector:
		return fmt.Sprintf("vector<float, %d>", t.dim)
	case kTuple:
		parts := make([]string, len(t.elems))
		for i, e := range t.elems {
			parts[i] = e.String()
		}
		return "tuple<" + strings.Join(parts, ", ") + ">"
	case kList:
		s = "list<" + t.elems[0].String() + ">"
	case kSet:
		s = "set<" + t.elems[0].String() + ">"
	case kMap:
		s = "map<" + t.elems[0].String() + ", " + t.elems[1].String() + ">"
	case kUDT:
		s = t.name
	}
	if t.frozen {
		return "frozen<" + s + ">"
	}
	return s
}

// multiCell: a non-frozen collection or UDT, stored as one cell per element or field.
func (t *ctype) multiCell() bool {
	return !t.frozen && (t.kind == kList || t.kind == kSet || t.kind == kMap || t.kind == kUDT)
}

// udtDef is a user-defined type of the run.
type udtDef struct {
	t *ctype // kUDT, frozen=false
}

func (u *udtDef) create(ks string) string {
	parts := make([]string, len(u.t.fields))
	for i, f := range u.t.fields {
		parts[i] = f + " " + u.t.elems[i].String()
	}
	return fmt.Sprintf("CREATE TYPE %s.%s (%s)", ks, u.t.name, strings.Join(parts, ", "))
}

// ref returns the UDT as a column type, frozen or not.
func (u *udtDef) ref(frozen bool) *ctype {
	c := *u.t
	c.frozen = frozen
	return &c
}

type role int

const (
	rolePartition role = iota
	roleClustering
	roleStatic
	roleRegular
)

type column struct {
	name string
	t    *ctype
	role role
	desc bool // clustering order
}

type table struct {
	name       string
	theme      string
	cols       []*column
	counter    bool
	defaultTTL int
	udts       []*udtDef // types this table uses, in creation order
	kText      bool      // partition key column k is text (else bigint)
}

func (tb *table) byRole(r role) []*column {
	var out []*column
	for _, c := range tb.cols {
		if c.role == r {
			out = append(out, c)
		}
	}
	return out
}

func (tb *table) col(name string) *column {
	for _, c := range tb.cols {
		if c.name == name {
			return c
		}
	}
	return nil
}

// nonKey returns the static and regular columns.
func (tb *table) nonKey() []*column {
	return append(tb.byRole(roleStatic), tb.byRole(roleRegular)...)
}

func (tb *table) create(ks string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s.%s (", ks, tb.name)
	for _, c := range tb.cols {
		fmt.Fprintf(&b, "%s %s", c.name, c.t)
		if c.role == roleStatic {
			b.WriteString(" static")
		}
		b.WriteString(", ")
	}
	var pk, ck, order []string
	for _, c := range tb.cols {
		switch c.role {
		case rolePartition:
			pk = append(pk, c.name)
		case roleClustering:
			ck = append(ck, c.name)
			dir := "ASC"
			if c.desc {
				dir = "DESC"
			}
			order = append(order, c.name+" "+dir)
		}
	}
	fmt.Fprintf(&b, "PRIMARY KEY ((%s)", strings.Join(pk, ", "))
	for _, c := range ck {
		b.WriteString(", " + c)
	}
	b.WriteString("))")
	var with []string
	if len(order) > 0 {
		with = append(with, "CLUSTERING ORDER BY ("+strings.Join(order, ", ")+")")
	}
	if tb.defaultTTL > 0 {
		with = append(with, fmt.Sprintf("default_time_to_live = %d", tb.defaultTTL))
	}
	if len(with) > 0 {
		b.WriteString(" WITH " + strings.Join(with, " AND "))
	}
	return b.String()
}

// ddl returns the CREATE TYPE and CREATE TABLE statements of a table, in order.
func (tb *table) ddl(ks string) []string {
	var out []string
	for _, u := range tb.udts {
		out = append(out, u.create(ks))
	}
	return append(out, tb.create(ks))
}

// schemaGen builds the run's tables from the seed: one table per theme, together
// covering every column type in every role Cassandra 5.0 accepts it in (before 5.0:
// vectors become frozen lists of floats).
type schemaGen struct {
	r        *rand.Rand
	udts     []*udtDef
	noVector bool // before Cassandra 5.0
}

// vector is a vector<float, dim>, or before Cassandra 5.0, which has none, the nearest
// type there: a frozen list of floats (one cell, written whole).
func (g *schemaGen) vector(dim int) *ctype {
	if g.noVector {
		return &ctype{kind: kList, frozen: true, elems: []*ctype{scalar("float")}}
	}
	return &ctype{kind: kVector, dim: dim}
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// frozenType returns a random type usable inside a collection, tuple or UDT, or as a
// clustering column when key is set (no duration anywhere inside).
func (g *schemaGen) frozenType(depth int, key bool) *ctype {
	names := scalarNames
	if key {
		names = keyScalars
	}
	if depth <= 0 || g.r.IntN(3) > 0 {
		return scalar(pick(g.r, names))
	}
	switch g.r.IntN(6) {
	case 0:
		return &ctype{kind: kList, frozen: true, elems: []*ctype{g.frozenType(depth-1, key)}}
	case 1:
		return &ctype{kind: kSet, frozen: true, elems: []*ctype{g.frozenType(depth-1, true)}}
	case 2:
		return &ctype{kind: kMap, frozen: true, elems: []*ctype{g.frozenType(depth-1, true), g.frozenType(depth-1, key)}}
	case 3:
		return &ctype{kind: kTuple, elems: []*ctype{g.frozenType(depth-1, key), g.frozenType(depth-1, key)}}
	case 4:
		if len(g.udts) > 0 && !key {
			return pick(g.r, g.udts).ref(true)
		}
		return scalar(pick(g.r, names))
	default:
		return g.vector(1 + g.r.IntN(4))
	}
}

// mapKeyType is a scalar: bind values of maps are Go maps, whose keys must be comparable.
func (g *schemaGen) mapKeyType() *ctype { return scalar(pick(g.r, keyScalars)) }

func (g *schemaGen) collection(k kind, frozen bool) *ctype {
	switch k {
	case kList:
		return &ctype{kind: kList, frozen: frozen, elems: []*ctype{g.frozenType(1, false)}}
	case kSet:
		return &ctype{kind: kSet, frozen: frozen, elems: []*ctype{g.frozenType(1, true)}}
	default:
		return &ctype{kind: kMap, frozen: frozen, elems: []*ctype{g.mapKeyType(), g.frozenType(1, false)}}
	}
}

func (g *schemaGen) newUDT(name string, nested, key bool) *udtDef {
	t := &ctype{kind: kUDT, name: name}
	n := 2 + g.r.IntN(3)
	for i := 0; i < n; i++ {
		t.fields = append(t.fields, fmt.Sprintf("f%d", i))
		if nested && i == n-1 && len(g.udts) > 0 {
			t.elems = append(t.elems, pick(g.r, g.udts).ref(true))
			continue
		}
		if i == 0 && !key {
			t.elems = append(t.elems, scalar(pick(g.r, scalarNames)))
			continue
		}
		t.elems = append(t.elems, g.frozenType(1, key))
	}
	u := &udtDef{t: t}
	g.udts = append(g.udts, u)
	return u
}

func generateSchemas(r *rand.Rand) []*table {
	g := &schemaGen{r: r, noVector: before50()}
	u0 := g.newUDT("ua", false, true) // usable in clustering keys: no duration inside
	u1 := g.newUDT("ub", true, false)
	udts := []*udtDef{u0, u1}
	var tables []*table
	add := func(theme string, cols []*column, opts ...func(*table)) {
		tb := &table{name: "t_" + theme, theme: theme, udts: udts, kText: r.IntN(2) == 0}
		kt := "bigint"
		if tb.kText {
			kt = "text"
		}
		tb.cols = append([]*column{{name: "k", t: scalar(kt), role: rolePartition}, {name: "slot", t: scalar("int"), role: rolePartition}}, cols...)
		for _, o := range opts {
			o(tb)
		}
		tables = append(tables, tb)
	}
	ck := func(i int, t *ctype) *column {
		return &column{name: fmt.Sprintf("c%d", i), t: t, role: roleClustering, desc: r.IntN(2) == 0}
	}
	reg := func(i int, t *ctype) *column { return &column{name: fmt.Sprintf("r%d", i), t: t, role: roleRegular} }
	st := func(i int, t *ctype) *column { return &column{name: fmt.Sprintf("s%d", i), t: t, role: roleStatic} }

	// scalars: every scalar type as a regular column, some as statics, one as the clustering key.
	{
		cols := []*column{ck(0, scalar(pick(r, keyScalars)))}
		for i, n := range scalarNames {
			cols = append(cols, reg(i, scalar(n)))
		}
		cols = append(cols, reg(len(scalarNames), g.vector(3)))
		for i := 0; i < 3; i++ {
			cols = append(cols, st(i, scalar(pick(r, scalarNames))))
		}
		add("scalars", cols)
	}
	// collections: non-frozen and frozen lists, sets, maps, nested; static collections.
	{
		cols := []*column{ck(0, scalar(pick(r, keyScalars)))}
		i := 0
		for _, k := range []kind{kList, kSet, kMap, kList, kSet, kMap} {
			cols = append(cols, reg(i, g.collection(k, false)))
			i++
		}
		for _, k := range []kind{kList, kSet, kMap} {
			cols = append(cols, reg(i, g.collection(k, true)))
			i++
		}
		cols = append(cols, reg(i, &ctype{kind: kList, elems: []*ctype{{kind: kMap, frozen: true, elems: []*ctype{scalar("text"), {kind: kList, frozen: true, elems: []*ctype{scalar("int")}}}}}}))
		cols = append(cols, reg(i+1, scalar("int")))
		for j, k := range []kind{kList, kSet, kMap} {
			cols = append(cols, st(j, g.collection(k, false)))
		}
		add("collections", cols)
	}
	// udts: non-frozen and frozen UDTs, tuples, collections of UDTs, a static UDT.
	{
		cols := []*column{ck(0, scalar(pick(r, keyScalars))),
			reg(0, u0.ref(false)), reg(1, u0.ref(true)), reg(2, u1.ref(false)), reg(3, u1.ref(true)),
			reg(4, &ctype{kind: kTuple, elems: []*ctype{scalar("int"), scalar("text"), g.frozenType(1, false)}}),
			reg(5, &ctype{kind: kList, elems: []*ctype{u0.ref(true)}}),
			reg(6, &ctype{kind: kMap, elems: []*ctype{scalar("text"), u1.ref(true)}}),
			reg(7, &ctype{kind: kTuple, elems: []*ctype{u0.ref(true), &ctype{kind: kSet, frozen: true, elems: []*ctype{scalar("int")}}}}),
			reg(8, scalar("text")),
			st(0, u0.ref(false)), st(1, &ctype{kind: kTuple, elems: []*ctype{scalar("bigint"), scalar("uuid")}}),
		}
		add("udts", cols)
	}
	// keys: complex clustering columns (frozen collections, tuples, UDTs, vectors).
	{
		cols := []*column{ck(0, g.frozenType(2, true)), ck(1, g.frozenType(2, true)),
			reg(0, scalar(pick(r, scalarNames))), reg(1, g.collection(kList, false)), reg(2, g.collection(kMap, false)),
			reg(3, u0.ref(false)), st(0, scalar(pick(r, scalarNames)))}
		if r.IntN(2) == 0 {
			cols[1] = ck(1, u0.ref(true))
		}
		add("keys", cols)
	}
	// ttl: a table with default_time_to_live, two clustering columns, statics.
	{
		cols := []*column{ck(0, scalar(pick(r, keyScalars))), ck(1, scalar(pick(r, keyScalars))),
			reg(0, scalar(pick(r, scalarNames))), reg(1, scalar(pick(r, scalarNames))),
			reg(2, g.collection(kList, false)), reg(3, g.collection(kSet, false)), reg(4, g.collection(kMap, false)),
			reg(5, u0.ref(false)), reg(6, g.collection(kList, true)),
			st(0, scalar(pick(r, scalarNames))), st(1, g.collection(kMap, false))}
		add("ttl", cols, func(tb *table) { tb.defaultTTL = 86400 })
	}
	// nock: no clustering columns, so a row is its partition.
	{
		cols := []*column{reg(0, scalar(pick(r, scalarNames))), reg(1, scalar(pick(r, scalarNames))),
			reg(2, g.collection(kList, false)), reg(3, g.collection(kSet, false)), reg(4, g.collection(kMap, false)),
			reg(5, u1.ref(false)), reg(6, g.vector(2)), reg(7, &ctype{kind: kTuple, elems: []*ctype{scalar("int"), g.frozenType(1, false)}})}
		add("nock", cols)
	}
	// counters: counter columns in their own table, one static.
	{
		cols := []*column{ck(0, scalar(pick(r, keyScalars))),
			reg(0, &ctype{kind: kCounter}), reg(1, &ctype{kind: kCounter}), reg(2, &ctype{kind: kCounter}),
			st(0, &ctype{kind: kCounter})}
		add("counters", cols, func(tb *table) { tb.counter = true })
	}
	return tables
}
