package oracle

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"
)

// val is one generated value in the three forms a statement can carry it: a CQL
// literal, a Go value for a bind marker, and JSON for INSERT … JSON.
type val struct {
	lit  string
	gov  any
	kgov any // gov as a Go map key (comparable); nil means gov
	js   string
	// items are a list's or set's elements or a map's keys; mvals are a map's values.
	items, mvals []val
}

func (v val) key() any {
	if v.kgov != nil {
		return v.kgov
	}
	return v.gov
}

var nullVal = val{lit: "null", gov: nil, js: "null"}

// vector is a vector<float, n> bind value: gocql v1.7.0 has no vector codec, so it
// serialises itself (n big-endian float32s, no length prefixes).
type vector []float32

func (v vector) MarshalCQL(gocql.TypeInfo) ([]byte, error) {
	if v == nil {
		return nil, nil // null
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.BigEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b, nil
}

// bindValue is v's Go value for a bind marker of type t. NULL is nil, as a user binds
// it, for collections; null{} (a gocql.Marshaler) for the other types, as gocql cannot
// marshal an untyped nil as a vector or a UDT.
func bindValue(t *ctype, v val) any {
	if v.gov == nil {
		if t.kind == kList || t.kind == kSet || t.kind == kMap {
			return nil
		}
		return null{}
	}
	return v.gov
}

// null binds NULL whatever the column type.
type null struct{}

func (null) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return nil, nil }

type valueGen struct{ r *rand.Rand }

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func quoteLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

const textRunes = "abcdefghijklmnopqrstuvwxyz0123456789 '\"_-é日\\"

func (g valueGen) text(ascii bool) string {
	n := g.r.IntN(8)
	var b strings.Builder
	rs := []rune(textRunes)
	for i := 0; i < n; i++ {
		c := rs[g.r.IntN(len(rs))]
		if ascii && c > 127 {
			c = 'x'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// exactFloat returns a value with an exact binary form, so literal, bind and JSON agree.
func (g valueGen) exactFloat() float64 {
	return float64(g.r.IntN(20001)-10000) / 8
}

func floatLit(f float64, bits int) string {
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

func (g valueGen) uuid(version byte) gocql.UUID {
	var u gocql.UUID
	for i := range u {
		u[i] = byte(g.r.IntN(256))
	}
	u[6] = u[6]&0x0f | version<<4
	u[8] = u[8]&0x3f | 0x80
	return u
}

func (g valueGen) scalar(name string) val {
	r := g.r
	switch name {
	case "ascii", "text":
		s := g.text(name == "ascii")
		return val{lit: quoteLit(s), gov: s, js: jsString(s)}
	case "bigint":
		n := r.Int64() >> r.IntN(64)
		if r.IntN(2) == 0 {
			n = -n
		}
		s := strconv.FormatInt(n, 10)
		return val{lit: s, gov: n, js: s}
	case "int":
		n := int32(r.Uint32() >> r.IntN(32))
		s := strconv.FormatInt(int64(n), 10)
		return val{lit: s, gov: n, js: s}
	case "smallint":
		n := int16(r.IntN(65536) - 32768)
		s := strconv.Itoa(int(n))
		return val{lit: s, gov: n, js: s}
	case "tinyint":
		n := int8(r.IntN(256) - 128)
		s := strconv.Itoa(int(n))
		return val{lit: s, gov: n, js: s}
	case "blob":
		b := make([]byte, r.IntN(6))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		s := "0x" + hex.EncodeToString(b)
		return val{lit: s, gov: b, kgov: string(b), js: jsString(s)}
	case "boolean":
		b := r.IntN(2) == 0
		s := strconv.FormatBool(b)
		return val{lit: s, gov: b, js: s}
	case "date":
		d := time.Date(1900+r.IntN(200), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC)
		s := d.Format("2006-01-02")
		return val{lit: quoteLit(s), gov: d, js: jsString(s)}
	case "decimal":
		d := inf.NewDec(r.Int64N(2_000_000)-1_000_000, inf.Scale(r.IntN(4)))
		s := d.String()
		return val{lit: s, gov: d, js: s}
	case "double":
		f := g.exactFloat()
		s := floatLit(f, 64)
		return val{lit: s, gov: f, js: s}
	case "float":
		f := float32(g.exactFloat())
		s := floatLit(float64(f), 32)
		return val{lit: s, gov: f, js: s}
	case "duration":
		d := gocql.Duration{Months: int32(r.IntN(25)), Days: int32(r.IntN(61)), Nanoseconds: int64(r.IntN(100_000)) * 1_000_000}
		sign := ""
		if r.IntN(5) == 0 {
			d = gocql.Duration{Months: -d.Months, Days: -d.Days, Nanoseconds: -d.Nanoseconds}
			sign = "-"
		}
		s := fmt.Sprintf("%s%dmo%dd%dns", sign, abs(int64(d.Months)), abs(int64(d.Days)), abs(d.Nanoseconds))
		return val{lit: s, gov: d, js: jsString(s)}
	case "inet":
		var ip net.IP
		if r.IntN(3) > 0 {
			ip = net.IPv4(byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))).To4()
		} else {
			ip = make(net.IP, 16)
			for i := range ip {
				ip[i] = byte(r.IntN(256))
			}
		}
		s := ip.String()
		return val{lit: quoteLit(s), gov: ip, kgov: s, js: jsString(s)}
	case "time":
		ns := r.Int64N(86400 * 1e9)
		t := time.Duration(ns)
		s := fmt.Sprintf("%02d:%02d:%02d.%09d", ns/3600e9, ns/60e9%60, ns/1e9%60, ns%1e9)
		return val{lit: quoteLit(s), gov: t, js: jsString(s)}
	case "timestamp":
		t := time.UnixMilli(r.Int64N(4e12)).UTC()
		s := t.Format("2006-01-02 15:04:05.000-0700")
		return val{lit: quoteLit(s), gov: t, js: jsString(s)}
	case "timeuuid", "uuid":
		v := byte(4)
		if name == "timeuuid" {
			v = 1
		}
		u := g.uuid(v)
		return val{lit: u.String(), gov: u, js: jsString(u.String())}
	case "varint":
		n := new(big.Int).Mul(big.NewInt(r.Int64()>>r.IntN(63)), big.NewInt(r.Int64N(1<<40)+1))
		if r.IntN(2) == 0 {
			n.Neg(n)
		}
		s := n.String()
		return val{lit: s, gov: n, js: s}
	}
	panic("oracle: no generator for scalar " + name)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// value generates a value of t. Collections get minLen to minLen+2 elements.
func (g valueGen) value(t *ctype, minLen int) val {
	r := g.r
	switch t.kind {
	case kScalar:
		return g.scalar(t.name)
	case kCounter:
		n := int64(r.IntN(100) + 1)
		s := strconv.FormatInt(n, 10)
		return val{lit: s, gov: n, js: s}
	case kVector:
		v := make(vector, t.dim)
		lits := make([]string, t.dim)
		for i := range v {
			v[i] = float32(g.exactFloat())
			lits[i] = floatLit(float64(v[i]), 32)
		}
		s := "[" + strings.Join(lits, ", ") + "]"
		return val{lit: s, gov: v, js: s}
	case kTuple:
		lits, jss := make([]string, len(t.elems)), make([]string, len(t.elems))
		gov := make([]any, len(t.elems))
		for i, e := range t.elems {
			v := g.value(e, 0)
			lits[i], jss[i], gov[i] = v.lit, v.js, v.gov
		}
		return val{lit: "(" + strings.Join(lits, ", ") + ")", gov: gov, js: "[" + strings.Join(jss, ", ") + "]"}
	case kUDT:
		lits, jss := make([]string, len(t.elems)), make([]string, len(t.elems))
		gov := map[string]any{}
		for i, e := range t.elems {
			v := g.value(e, 0)
			lits[i] = t.fields[i] + ": " + v.lit
			jss[i] = jsString(t.fields[i]) + ": " + v.js
			gov[t.fields[i]] = v.gov
		}
		return val{lit: "{" + strings.Join(lits, ", ") + "}", gov: gov, js: "{" + strings.Join(jss, ", ") + "}"}
	}
	n := minLen + r.IntN(3)
	var items, mvals []val
	for i := 0; i < n; i++ {
		items = append(items, g.value(t.elems[0], 0))
		if t.kind == kMap {
			mvals = append(mvals, g.value(t.elems[1], 0))
		}
	}
	return mkColl(t.kind, items, mvals)
}

// mkColl builds a list, set or map value from its elements (map: keys and values).
// Sets and maps drop repeated elements and keys.
func mkColl(k kind, items, mvals []val) val {
	seen := map[string]bool{}
	var lits, jss []string
	out := val{}
	switch k {
	case kList:
		gov := []any{}
		for _, v := range items {
			lits, jss, gov = append(lits, v.lit), append(jss, v.js), append(gov, v.gov)
			out.items = append(out.items, v)
		}
		out.lit, out.gov, out.js = "["+strings.Join(lits, ", ")+"]", gov, "["+strings.Join(jss, ", ")+"]"
	case kSet:
		gov := []any{}
		for _, v := range items {
			if seen[v.lit] {
				continue
			}
			seen[v.lit] = true
			lits, jss, gov = append(lits, v.lit), append(jss, v.js), append(gov, v.gov)
			out.items = append(out.items, v)
		}
		out.lit, out.gov, out.js = "{"+strings.Join(lits, ", ")+"}", gov, "["+strings.Join(jss, ", ")+"]"
	default:
		gov := map[any]any{}
		for i, k := range items {
			if seen[k.lit] {
				continue
			}
			seen[k.lit] = true
			v := mvals[i]
			lits = append(lits, k.lit+": "+v.lit)
			jss = append(jss, jsonKey(k.js)+": "+v.js)
			gov[k.key()] = v.gov
			out.items, out.mvals = append(out.items, k), append(out.mvals, v)
		}
		out.lit, out.gov, out.js = "{"+strings.Join(lits, ", ")+"}", gov, "{"+strings.Join(jss, ", ")+"}"
	}
	return out
}

// jsonKey turns a value's JSON into a JSON object key: Cassandra reads a map key of a
// non-string type from the key string's JSON text.
func jsonKey(js string) string {
	if strings.HasPrefix(js, `"`) {
		return js
	}
	return jsString(js)
}
