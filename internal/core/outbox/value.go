package outbox

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxDepth bounds how deeply collections nest in a stored value (a list of maps of
// lists …): deeper is ErrValue on Append, and damage on decode.
const MaxDepth = 16

// encodeValue stores a bound value so that decodeValue gives back one gocql marshals to
// the same bytes for every column type that accepted the original:
//   - the Go scalars (exactly these types: a named type such as `type Status string` is
//     marshalled by gocql by reflection, differently for some column types), []byte,
//     time.Time, time.Duration, gocql.UUID, [16]byte, gocql.Duration, *big.Int,
//     *inf.Dec, net.IP, nil and gocql.UnsetValue, as themselves;
//   - a pointer as what it points to; a nil pointer as a nil pointer (gocql sends NULL
//     for one whatever the column type), a pointer to UnsetValue as NULL (gocql does not
//     see UNSET behind a pointer);
//   - a slice or array (a list, set, tuple or vector) as []any of its elements, as gocql
//     marshals them element by element, with no nil inside (gocql writes a typed nil in
//     a tuple as an empty value, an untyped one as NULL: the outbox does not keep the
//     difference);
//   - a map as map[string]any when its keys are strings (the form a UDT needs too),
//     else map[any]any; its keys scalars, no two of them stored alike.
//
// A nil slice or map is kept at the top (gocql sends NULL for one; a nil map[string]any
// into a UDT, a UDT of null fields), refused inside a collection. Anything else — a
// struct, a named scalar type, a value with its own MarshalCQL, a map keyed by a slice
// or pointer, a channel — is
// ErrValue: the outbox does not know what bytes it becomes.
func (vs *Values) EncodeValue(v any) (Value, error) { return vs.encodeDepth(v, 0) }

// Values is what the outbox needs of a driver's value types: its UNSET marker, the
// storing of its own types (its UUID, its Duration, its Marshalers: ok false for any
// other value), and their decoding.
type Values struct {
	Unset    any
	Own      func(v any) (stored Value, ok bool, err error)
	UUID     func(s string) (any, error)
	Duration func(months, days int32, ns int64) any
	Decimal  func(unscaled *big.Int, scale int32) any
}

func (vs *Values) encodeDepth(v any, depth int) (Value, error) {
	if depth >= MaxDepth {
		return Value{}, fmt.Errorf("%w: nested more than %d deep", ErrValue, MaxDepth)
	}
	if v == vs.Unset {
		return Value{T: "unset"}, nil
	}
	if depth > 0 {
		if rv := reflect.ValueOf(v); v == nil || v == vs.Unset || (nilable(rv.Kind()) && rv.IsNil()) {
			return Value{}, fmt.Errorf("%w: a nil or UNSET inside a collection or tuple", ErrValue)
		}
	}
	switch x := v.(type) {
	case nil:
		return Value{T: "null"}, nil
	case bool:
		if x {
			return Value{T: "bool", V: "1"}, nil
		}
		return Value{T: "bool", V: "0"}, nil
	case string:
		if !utf8.ValidString(x) {
			// JSON would replace the invalid bytes: keep them in base64.
			return Value{T: "string64", V: base64.StdEncoding.EncodeToString([]byte(x))}, nil
		}
		return Value{T: "string", V: x}, nil
	case []byte:
		if x == nil {
			return Value{T: "nilbytes"}, nil
		}
		return Value{T: "bytes", V: base64.StdEncoding.EncodeToString(x)}, nil
	case uint:
		return Value{T: "uint", V: strconv.FormatUint(uint64(x), 10)}, nil
	case int:
		return Value{T: "int", V: strconv.FormatInt(int64(x), 10)}, nil
	case int8:
		return Value{T: "int8", V: strconv.FormatInt(int64(x), 10)}, nil
	case int16:
		return Value{T: "int16", V: strconv.FormatInt(int64(x), 10)}, nil
	case int32:
		return Value{T: "int32", V: strconv.FormatInt(int64(x), 10)}, nil
	case int64:
		return Value{T: "int64", V: strconv.FormatInt(x, 10)}, nil
	case uint8:
		return Value{T: "uint8", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint16:
		return Value{T: "uint16", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint32:
		return Value{T: "uint32", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint64:
		return Value{T: "uint64", V: strconv.FormatUint(x, 10)}, nil
	case float32:
		return Value{T: "float32", V: strconv.FormatUint(uint64(math.Float32bits(x)), 10)}, nil
	case float64:
		return Value{T: "float64", V: strconv.FormatUint(math.Float64bits(x), 10)}, nil
	case time.Time:
		if y := x.UTC().Year(); y < 0 || y > 9999 {
			return Value{}, fmt.Errorf("%w: time %v is outside years 0–9999", ErrValue, x)
		}
		return Value{T: "time", V: x.UTC().Format(time.RFC3339Nano)}, nil
	case time.Duration:
		return Value{T: "duration", V: strconv.FormatInt(int64(x), 10)}, nil
	case [16]byte:
		return Value{T: "uuid", V: UUIDString(x)}, nil
	case *big.Int:
		if x == nil {
			return Value{T: "null"}, nil
		}
		return Value{T: "varint", V: x.String()}, nil
	case net.IP:
		if x == nil {
			return Value{T: "nilptr"}, nil
		}
		if len(x) != net.IPv4len && len(x) != net.IPv6len {
			return Value{}, fmt.Errorf("%w: an IP of %d bytes", ErrValue, len(x))
		}
		// Its bytes as given: 4 or 16 (an IPv4 in 16 bytes is 16 bytes to a blob column).
		return Value{T: "inet", V: base64.StdEncoding.EncodeToString(x)}, nil
	}
	// The driver's own types: its UUID and Duration; a Marshaler's own bytes, which the
	// outbox cannot know without the column's type, are ErrValue.
	if ov, ok, err := vs.Own(v); ok {
		return ov, err
	}
	return vs.encodeReflect(v, depth)
}

// nilable reports whether a value of kind k can be nil.
func nilable(k reflect.Kind) bool {
	switch k {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
		return true
	}
	return false
}

// encodeReflect stores pointers, slices, arrays and maps, which gocql marshals by
// reflection; every other kind reaching here is a named or unknown type: ErrValue.
func (vs *Values) encodeReflect(v any, depth int) (Value, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			// gocql.Marshal sends NULL for any nil pointer before it looks at the type.
			return Value{T: "nilptr"}, nil
		}
		if rv.Elem().Interface() == vs.Unset {
			return Value{T: "null"}, nil // UNSET is seen only by its type: behind a pointer it is NULL
		}
		return vs.encodeDepth(rv.Elem().Interface(), depth+1)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			// Only at the top (encodeDepth refuses nils deeper), where gocql sends NULL
			// for a nil list, set or byte slice; a tuple needs its elements.
			return Value{T: "nilptr"}, nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			// gocql marshals a []byte-like slice (json.RawMessage) as bytes; anything else
			// of bytes ([4]byte, []octet, a byte type with its own MarshalCQL) is refused.
			if rv.Kind() == reflect.Slice && rv.Type().Elem() == reflect.TypeOf(byte(0)) {
				return vs.encodeDepth(rv.Bytes(), depth)
			}
			return Value{}, fmt.Errorf("%w of type %T", ErrValue, v)
		}
		out := Value{T: "list", L: make([]Value, rv.Len())}
		for i := range rv.Len() {
			e, err := vs.encodeDepth(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return Value{}, err
			}
			out.L[i] = e
		}
		return out, nil
	case reflect.Map:
		if rv.IsNil() {
			// Only at the top: gocql sends NULL for a nil map into a map column, and a UDT
			// of null fields for a nil map[string]any into a UDT column.
			if rv.Type().Key().Kind() == reflect.String {
				return Value{T: "nilmap", V: "s"}, nil
			}
			return Value{T: "nilmap"}, nil
		}
		out := Value{T: "map"}
		it := rv.MapRange()
		for it.Next() {
			if it.Key().Kind() == reflect.Pointer || it.Key().Kind() == reflect.Interface && it.Key().Elem().Kind() == reflect.Pointer {
				return Value{}, fmt.Errorf("%w: a map keyed by pointers", ErrValue)
			}
			k, err := vs.encodeDepth(it.Key().Interface(), depth+1)
			if err != nil {
				return Value{}, err
			}
			if !scalarKey(k.T) {
				return Value{}, fmt.Errorf("%w: a map keyed by %T", ErrValue, it.Key().Interface())
			}
			e, err := vs.encodeDepth(it.Value().Interface(), depth+1)
			if err != nil {
				return Value{}, err
			}
			out.K, out.L = append(out.K, k), append(out.L, e)
		}
		if err := sortEntries(&out); err != nil {
			return Value{}, fmt.Errorf("%w: %v", ErrValue, err)
		}
		return out, nil
	}
	return Value{}, fmt.Errorf("%w of type %T", ErrValue, v)
}

// scalarKey reports whether a stored type may be a map key: decoded, it is a comparable
// Go value that means the same.
func scalarKey(t string) bool {
	switch t {
	case "list", "map", "null", "unset", "bytes", "nilbytes", "nilptr", "nilmap", "inet", "varint", "decimal":
		return false
	}
	return true
}

// sortEntries puts a map's entries in key order, so that one map is always stored alike,
// and refuses two keys stored alike (a time in two zones, NaN twice): gocql would send
// both, a decoded map holds one.
func sortEntries(m *Value) error {
	idx := make([]int, len(m.K))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		ka, kb := m.K[idx[a]], m.K[idx[b]]
		return ka.T < kb.T || (ka.T == kb.T && ka.V < kb.V)
	})
	k2, l2 := make([]Value, len(idx)), make([]Value, len(idx))
	for i, j := range idx {
		k2[i], l2[i] = m.K[j], m.L[j]
		if i > 0 && k2[i].T == k2[i-1].T && k2[i].V == k2[i-1].V {
			return fmt.Errorf("two map keys stored alike (%s %q)", k2[i].T, k2[i].V)
		}
	}
	m.K, m.L = k2, l2
	return nil
}

// decodeValue is strict: a value out of its type's range or with trailing text is an
// error, never silently wrapped or cut.
func (vs *Values) DecodeValue(v Value) (any, error) { return vs.decodeDepth(v, 0) }

func (vs *Values) decodeDepth(v Value, depth int) (any, error) {
	if depth >= MaxDepth {
		return nil, fmt.Errorf("outbox: a value nested more than %d deep", MaxDepth)
	}
	if (len(v.K) > 0 && v.T != "map") || (len(v.L) > 0 && v.T != "map" && v.T != "list") {
		return nil, fmt.Errorf("outbox: a %s value with elements", v.T)
	}
	parseI := func(bits int) (int64, error) { return strconv.ParseInt(v.V, 10, bits) }
	parseU := func(bits int) (uint64, error) { return strconv.ParseUint(v.V, 10, bits) }
	var (
		i   int64
		u   uint64
		out any
		err error
	)
	switch v.T {
	case "null":
		return nil, nil
	case "unset":
		return vs.Unset, nil
	case "bool":
		if v.V != "0" && v.V != "1" {
			err = errors.New("not 0 or 1")
		}
		out = v.V == "1"
	case "nilptr":
		return (*byte)(nil), nil
	case "nilbytes":
		return []byte(nil), nil
	case "nilmap":
		switch v.V {
		case "s":
			return map[string]any(nil), nil
		case "":
			return map[any]any(nil), nil
		}
		err = errors.New("not s or empty")
	case "string":
		out = v.V
	case "string64":
		var b []byte
		b, err = base64.StdEncoding.DecodeString(v.V)
		if err == nil && utf8.Valid(b) {
			err = errors.New("valid UTF-8 is stored as string")
		}
		out = string(b)
	case "bytes":
		out, err = base64.StdEncoding.DecodeString(v.V)
	case "uint":
		u, err = parseU(strconv.IntSize)
		out = uint(u)
	case "int":
		i, err = parseI(strconv.IntSize)
		out = int(i)
	case "int8":
		i, err = parseI(8)
		out = int8(i)
	case "int16":
		i, err = parseI(16)
		out = int16(i)
	case "int32":
		i, err = parseI(32)
		out = int32(i)
	case "int64":
		out, err = parseI(64)
	case "uint8":
		u, err = parseU(8)
		out = uint8(u)
	case "uint16":
		u, err = parseU(16)
		out = uint16(u)
	case "uint32":
		u, err = parseU(32)
		out = uint32(u)
	case "uint64":
		out, err = parseU(64)
	case "float32":
		u, err = parseU(32)
		out = math.Float32frombits(uint32(u))
	case "float64":
		u, err = parseU(64)
		out = math.Float64frombits(u)
	case "time":
		var tm time.Time
		tm, err = time.Parse(time.RFC3339Nano, v.V)
		out = tm.UTC()
	case "duration":
		i, err = parseI(64)
		out = time.Duration(i)
	case "uuid":
		out, err = vs.UUID(v.V)
	case "cqlduration":
		var mo, d int32
		var ns int64
		if mo, d, ns, err = decodeCQLDuration(v.V); err == nil {
			out = vs.Duration(mo, d, ns)
		}
	case "varint":
		n, ok := new(big.Int).SetString(v.V, 10)
		if !ok {
			err = errors.New("not an integer")
		}
		out = n
	case "decimal":
		var unscaled *big.Int
		var scale int32
		if unscaled, scale, err = decodeDecimal(v.V); err == nil {
			out = vs.Decimal(unscaled, scale)
		}
	case "inet":
		var b []byte
		b, err = base64.StdEncoding.DecodeString(v.V)
		if err == nil && len(b) != net.IPv4len && len(b) != net.IPv6len {
			err = fmt.Errorf("an IP of %d bytes", len(b))
		}
		out = net.IP(b)
	case "list":
		l := make([]any, len(v.L))
		for i, e := range v.L {
			if !inCollection(e.T) {
				return nil, fmt.Errorf("outbox: a %s inside a list", e.T)
			}
			if l[i], err = vs.decodeDepth(e, depth+1); err != nil {
				return nil, err
			}
		}
		return l, nil
	case "map":
		return vs.decodeMap(v, depth)
	default:
		return nil, fmt.Errorf("outbox: unknown value type %q", v.T)
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: bad %s value %q: %w", v.T, v.V, err)
	}
	return out, nil
}

// inCollection reports whether a stored type may stand inside a list or map.
func inCollection(t string) bool {
	switch t {
	case "null", "unset", "nilptr", "nilbytes", "nilmap":
		return false
	}
	return true
}

// decodeMap gives map[string]any when every key is a string, else map[any]any. Keys are
// what Append stores: scalars, none stored alike.
func (vs *Values) decodeMap(v Value, depth int) (any, error) {
	if len(v.K) != len(v.L) {
		return nil, fmt.Errorf("outbox: a map of %d keys and %d values", len(v.K), len(v.L))
	}
	canon := Value{K: make([]Value, len(v.K)), L: v.L}
	keys, vals := make([]any, len(v.K)), make([]any, len(v.L))
	strKeys := true
	for i := range v.K {
		if !scalarKey(v.K[i].T) || !inCollection(v.L[i].T) {
			return nil, fmt.Errorf("outbox: a map entry of types %q, %q", v.K[i].T, v.L[i].T)
		}
		var err error
		if keys[i], err = vs.decodeDepth(v.K[i], depth+1); err != nil {
			return nil, err
		}
		if vals[i], err = vs.decodeDepth(v.L[i], depth+1); err != nil {
			return nil, err
		}
		if canon.K[i], err = vs.encodeDepth(keys[i], depth+1); err != nil {
			return nil, err
		}
		_, isStr := keys[i].(string)
		strKeys = strKeys && isStr
	}
	if err := sortEntries(&canon); err != nil {
		return nil, fmt.Errorf("outbox: %v", err)
	}
	if strKeys {
		m := make(map[string]any, len(keys))
		for i, k := range keys {
			m[k.(string)] = vals[i]
		}
		return m, nil
	}
	m := make(map[any]any, len(keys))
	for i, k := range keys {
		m[k] = vals[i]
	}
	return m, nil
}

// Decimal stores a decimal of unscaled value and scale (for Values.Own: an *inf.Dec,
// nil a NULL).
func Decimal(unscaled *big.Int, scale int32, null bool) (Value, error) {
	if null {
		return Value{T: "null"}, nil
	}
	if scale == math.MinInt32 {
		return Value{}, fmt.Errorf("%w: decimal scale %d", ErrValue, scale)
	}
	return Value{T: "decimal", V: unscaled.String() + "e" + strconv.FormatInt(-int64(scale), 10)}, nil
}

// MarshalerError is ErrValue for a value that marshals itself (for Values.Own).
func MarshalerError(v any) error {
	return fmt.Errorf("%w of type %T (it marshals itself)", ErrValue, v)
}

// CQLDuration stores a CQL duration of months, days and nanoseconds (for Values.Own).
func CQLDuration(months, days int32, ns int64) Value {
	return Value{T: "cqlduration", V: fmt.Sprintf("%d,%d,%d", months, days, ns)}
}

// UUIDString is u in the canonical 8-4-4-4-12 hex form.
func UUIDString(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

func decodeCQLDuration(s string) (int32, int32, int64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return 0, 0, 0, errors.New("not months,days,nanoseconds")
	}
	mo, err1 := strconv.ParseInt(parts[0], 10, 32)
	d, err2 := strconv.ParseInt(parts[1], 10, 32)
	ns, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, 0, 0, err
	}
	return int32(mo), int32(d), ns, nil
}

// decodeDecimal reads "unscaled e exponent" (exponent = -scale).
func decodeDecimal(s string) (*big.Int, int32, error) {
	m, e, ok := strings.Cut(s, "e")
	if !ok {
		return nil, 0, errors.New("not unscaled e exponent")
	}
	unscaled, ok := new(big.Int).SetString(m, 10)
	if !ok {
		return nil, 0, errors.New("bad unscaled value")
	}
	exp, err := strconv.ParseInt(e, 10, 32)
	if err != nil || exp == math.MinInt32 {
		return nil, 0, errors.New("bad exponent")
	}
	return unscaled, int32(-exp), nil
}
