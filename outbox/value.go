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

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"
)

// maxDepth bounds how deeply collections nest in a stored value (a list of maps of
// lists …): deeper is ErrValue on Append, and damage on decode.
const maxDepth = 16

// encodeValue stores a bound value so that decodeValue gives back one gocql marshals to
// the same bytes for every column type that accepted the original:
//   - the Go scalars, []byte, time.Time, time.Duration, gocql.UUID, gocql.Duration,
//     *big.Int, *inf.Dec, net.IP, nil and gocql.UnsetValue, as themselves;
//   - named types of a basic kind (type Status string) as that kind: gocql marshals
//     them by kind;
//   - a pointer as what it points to (nil: null), as gocql dereferences it;
//   - a slice or array (a list, set, tuple or vector) as []any of its elements, a nil
//     slice as null, as gocql marshals them element by element;
//   - a map as map[string]any when its keys are strings (the form a UDT needs too),
//     else map[any]any, its keys scalars.
//
// Anything else — a struct, a value with its own MarshalCQL, a map keyed by a slice, a
// channel — is ErrValue: the outbox does not know what bytes it becomes.
func encodeValue(v any) (outboxValue, error) { return encodeDepth(v, 0) }

func encodeDepth(v any, depth int) (outboxValue, error) {
	if v == any(gocql.UnsetValue) {
		return outboxValue{T: "unset"}, nil
	}
	switch x := v.(type) {
	case nil:
		return outboxValue{T: "null"}, nil
	case bool:
		if x {
			return outboxValue{T: "bool", V: "1"}, nil
		}
		return outboxValue{T: "bool", V: "0"}, nil
	case string:
		return outboxValue{T: "string", V: x}, nil
	case []byte:
		if x == nil {
			return outboxValue{T: "null"}, nil
		}
		return outboxValue{T: "bytes", V: base64.StdEncoding.EncodeToString(x)}, nil
	case int:
		return outboxValue{T: "int", V: strconv.FormatInt(int64(x), 10)}, nil
	case int8:
		return outboxValue{T: "int8", V: strconv.FormatInt(int64(x), 10)}, nil
	case int16:
		return outboxValue{T: "int16", V: strconv.FormatInt(int64(x), 10)}, nil
	case int32:
		return outboxValue{T: "int32", V: strconv.FormatInt(int64(x), 10)}, nil
	case int64:
		return outboxValue{T: "int64", V: strconv.FormatInt(x, 10)}, nil
	case uint8:
		return outboxValue{T: "uint8", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint16:
		return outboxValue{T: "uint16", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint32:
		return outboxValue{T: "uint32", V: strconv.FormatUint(uint64(x), 10)}, nil
	case uint64:
		return outboxValue{T: "uint64", V: strconv.FormatUint(x, 10)}, nil
	case float32:
		return outboxValue{T: "float32", V: strconv.FormatUint(uint64(math.Float32bits(x)), 10)}, nil
	case float64:
		return outboxValue{T: "float64", V: strconv.FormatUint(math.Float64bits(x), 10)}, nil
	case time.Time:
		return outboxValue{T: "time", V: x.UTC().Format(time.RFC3339Nano)}, nil
	case time.Duration:
		return outboxValue{T: "duration", V: strconv.FormatInt(int64(x), 10)}, nil
	case gocql.UUID:
		return outboxValue{T: "uuid", V: x.String()}, nil
	case [16]byte:
		return outboxValue{T: "uuid", V: gocql.UUID(x).String()}, nil
	case gocql.Duration:
		return outboxValue{T: "cqlduration", V: fmt.Sprintf("%d,%d,%d", x.Months, x.Days, x.Nanoseconds)}, nil
	case *big.Int:
		if x == nil {
			return outboxValue{T: "null"}, nil
		}
		return outboxValue{T: "varint", V: x.String()}, nil
	case *inf.Dec:
		if x == nil {
			return outboxValue{T: "null"}, nil
		}
		return outboxValue{T: "decimal", V: x.UnscaledBig().String() + "e" + strconv.FormatInt(-int64(x.Scale()), 10)}, nil
	case net.IP:
		if x == nil {
			return outboxValue{T: "null"}, nil
		}
		if len(x) != net.IPv4len && len(x) != net.IPv6len {
			return outboxValue{}, fmt.Errorf("%w: an IP of %d bytes", ErrValue, len(x))
		}
		return outboxValue{T: "inet", V: x.String()}, nil
	case gocql.Marshaler:
		// Its own bytes, which the outbox cannot know without the column's type.
		return outboxValue{}, fmt.Errorf("%w of type %T (it marshals itself)", ErrValue, v)
	}
	return encodeReflect(v, depth)
}

// encodeReflect stores the kinds gocql marshals by reflection.
func encodeReflect(v any, depth int) (outboxValue, error) {
	if depth >= maxDepth {
		return outboxValue{}, fmt.Errorf("%w: nested more than %d deep", ErrValue, maxDepth)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return encodeDepth(rv.Bool(), depth)
	case reflect.String:
		return encodeDepth(rv.String(), depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// A named integer type is marshalled by its kind; int64 holds every one.
		return encodeDepth(rv.Convert(reflect.TypeOf(int64(0))).Interface(), depth)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return encodeDepth(rv.Convert(reflect.TypeOf(uint64(0))).Interface(), depth)
	case reflect.Float32:
		return encodeDepth(float32(rv.Float()), depth)
	case reflect.Float64:
		return encodeDepth(rv.Float(), depth)
	case reflect.Pointer:
		if rv.IsNil() {
			return outboxValue{T: "null"}, nil
		}
		return encodeDepth(rv.Elem().Interface(), depth+1)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return outboxValue{T: "null"}, nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			// gocql marshals a named []byte (json.RawMessage) as a blob, and an array of
			// bytes only as a UUID ([16]byte).
			if rv.Kind() == reflect.Slice {
				return encodeDepth(rv.Bytes(), depth)
			}
			if rv.Len() == 16 {
				var u gocql.UUID
				reflect.Copy(reflect.ValueOf(u[:]), rv)
				return encodeDepth(u, depth)
			}
			return outboxValue{}, fmt.Errorf("%w of type %T", ErrValue, v)
		}
		out := outboxValue{T: "list", L: make([]outboxValue, rv.Len())}
		for i := range rv.Len() {
			e, err := encodeDepth(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return outboxValue{}, err
			}
			out.L[i] = e
		}
		return out, nil
	case reflect.Map:
		if rv.IsNil() {
			return outboxValue{T: "null"}, nil
		}
		out := outboxValue{T: "map"}
		it := rv.MapRange()
		for it.Next() {
			k, err := encodeDepth(it.Key().Interface(), depth+1)
			if err != nil {
				return outboxValue{}, err
			}
			if k.T == "list" || k.T == "map" || k.T == "null" || k.T == "unset" || k.T == "bytes" {
				// Decoded, such a key would not be a valid Go map key of the same meaning.
				return outboxValue{}, fmt.Errorf("%w: a map keyed by %T", ErrValue, it.Key().Interface())
			}
			e, err := encodeDepth(it.Value().Interface(), depth+1)
			if err != nil {
				return outboxValue{}, err
			}
			out.K, out.L = append(out.K, k), append(out.L, e)
		}
		// In key order, so that the same map is always stored alike.
		idx := make([]int, len(out.K))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool {
			ka, kb := out.K[idx[a]], out.K[idx[b]]
			return ka.T < kb.T || (ka.T == kb.T && ka.V < kb.V)
		})
		k2, l2 := make([]outboxValue, len(idx)), make([]outboxValue, len(idx))
		for i, j := range idx {
			k2[i], l2[i] = out.K[j], out.L[j]
		}
		out.K, out.L = k2, l2
		return out, nil
	}
	return outboxValue{}, fmt.Errorf("%w of type %T", ErrValue, v)
}

// decodeValue is strict: a value out of its type's range or with trailing text is an
// error, never silently wrapped or cut.
func decodeValue(v outboxValue) (any, error) { return decodeDepth(v, 0) }

func decodeDepth(v outboxValue, depth int) (any, error) {
	if depth >= maxDepth {
		return nil, fmt.Errorf("outbox: a value nested more than %d deep", maxDepth)
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
		return gocql.UnsetValue, nil
	case "bool":
		if v.V != "0" && v.V != "1" {
			err = errors.New("not 0 or 1")
		}
		out = v.V == "1"
	case "string":
		out = v.V
	case "bytes":
		out, err = base64.StdEncoding.DecodeString(v.V)
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
		out, err = time.Parse(time.RFC3339Nano, v.V)
	case "duration":
		i, err = parseI(64)
		out = time.Duration(i)
	case "uuid":
		out, err = gocql.ParseUUID(v.V)
	case "cqlduration":
		out, err = decodeCQLDuration(v.V)
	case "varint":
		n, ok := new(big.Int).SetString(v.V, 10)
		if !ok {
			err = errors.New("not an integer")
		}
		out = n
	case "decimal":
		out, err = decodeDecimal(v.V)
	case "inet":
		ip := net.ParseIP(v.V)
		if ip == nil {
			err = errors.New("not an IP address")
		}
		out = ip
	case "list":
		l := make([]any, len(v.L))
		for i, e := range v.L {
			if l[i], err = decodeDepth(e, depth+1); err != nil {
				return nil, err
			}
		}
		return l, nil
	case "map":
		return decodeMap(v, depth)
	default:
		return nil, fmt.Errorf("outbox: unknown value type %q", v.T)
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: bad %s value %q: %w", v.T, v.V, err)
	}
	return out, nil
}

// decodeMap gives map[string]any when every key is a string, else map[any]any.
func decodeMap(v outboxValue, depth int) (any, error) {
	if len(v.K) != len(v.L) {
		return nil, fmt.Errorf("outbox: a map of %d keys and %d values", len(v.K), len(v.L))
	}
	keys, vals := make([]any, len(v.K)), make([]any, len(v.L))
	strKeys := true
	for i := range v.K {
		if v.K[i].T == "list" || v.K[i].T == "map" || v.K[i].T == "null" || v.K[i].T == "unset" || v.K[i].T == "bytes" {
			return nil, fmt.Errorf("outbox: a map key of type %q", v.K[i].T)
		}
		var err error
		if keys[i], err = decodeDepth(v.K[i], depth+1); err != nil {
			return nil, err
		}
		if vals[i], err = decodeDepth(v.L[i], depth+1); err != nil {
			return nil, err
		}
		_, isStr := keys[i].(string)
		strKeys = strKeys && isStr
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
		if !reflect.TypeOf(k).Comparable() {
			return nil, fmt.Errorf("outbox: a map key of type %T", k)
		}
		m[k] = vals[i]
	}
	return m, nil
}

func decodeCQLDuration(s string) (gocql.Duration, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return gocql.Duration{}, errors.New("not months,days,nanoseconds")
	}
	mo, err1 := strconv.ParseInt(parts[0], 10, 32)
	d, err2 := strconv.ParseInt(parts[1], 10, 32)
	ns, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return gocql.Duration{}, err
	}
	return gocql.Duration{Months: int32(mo), Days: int32(d), Nanoseconds: ns}, nil
}

// decodeDecimal reads "unscaled e exponent" (exponent = -scale).
func decodeDecimal(s string) (*inf.Dec, error) {
	m, e, ok := strings.Cut(s, "e")
	if !ok {
		return nil, errors.New("not unscaled e exponent")
	}
	unscaled, ok := new(big.Int).SetString(m, 10)
	if !ok {
		return nil, errors.New("bad unscaled value")
	}
	exp, err := strconv.ParseInt(e, 10, 32)
	if err != nil || exp == math.MinInt32 {
		return nil, errors.New("bad exponent")
	}
	return inf.NewDecBig(unscaled, inf.Scale(-exp)), nil
}
