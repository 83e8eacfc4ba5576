package oracle

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strconv"
	"testing"
	"time"

	gocqlv2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"

	retryv2 "github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/retry"
)

// driver is what the statement oracle asks of a Go driver and its cqlsafe package: the
// library's judgement of one execution, and that execution. Setup and reads go through
// the harness's gocql v1.7 session whatever the driver: what Cassandra holds does not
// depend on the driver that reads it.
type driver interface {
	// decide is the library's judgement of cql with values at timestamp ts, as
	// Policy.Exec judges it (RepeatableAt with the session's schema).
	decide(keyspace, cql string, values []any, ts int64) (repeatable bool, reasons []string)
	// query and batch execute once at timestamp ts.
	query(ctx context.Context, text string, values []any, ts int64) error
	batch(ctx context.Context, typ string, texts []string, values [][]any, ts int64) error
	// rejected: Cassandra refused the statement (invalid or syntax error).
	rejected(err error) bool
}

// v1 is gocql v1.7 with github.com/cqlsafe/cqlsafe/retry.
type v1 struct {
	s *gocql.Session
	p *retry.Policy
}

func newV1(s *gocql.Session) v1 {
	return v1{s: s, p: retry.NewPolicy(retry.WithSchema(retry.SessionSchema(s)))}
}

func (d v1) decide(keyspace, cql string, values []any, ts int64) (bool, []string) {
	v := d.p.RepeatableAt(keyspace, cql, values, ts)
	return v.Idempotent, v.Reasons
}

func (d v1) query(ctx context.Context, text string, values []any, ts int64) error {
	return d.s.Query(text, values...).WithContext(ctx).WithTimestamp(ts).Exec()
}

func (d v1) batch(ctx context.Context, typ string, texts []string, values [][]any, ts int64) error {
	t := gocql.LoggedBatch
	switch typ {
	case "UNLOGGED":
		t = gocql.UnloggedBatch
	case "COUNTER":
		t = gocql.CounterBatch
	}
	b := d.s.NewBatch(t).WithContext(ctx).WithTimestamp(ts)
	for i, text := range texts {
		b.Query(text, values[i]...)
	}
	return d.s.ExecuteBatch(b)
}

func (v1) rejected(err error) bool {
	var re gocql.RequestError
	if errors.As(err, &re) {
		return re.Code() == gocql.ErrCodeInvalid || re.Code() == gocql.ErrCodeSyntax
	}
	return false
}

// v2 is the Apache Cassandra Go driver v2 with github.com/cqlsafe/cqlsafe/gocqlv2/retry.
// The generator's values are gocql v1.7's where a type is the driver's own (UUID,
// Duration, UNSET, its Marshalers): toV2 maps them.
type v2 struct {
	s *gocqlv2.Session
	p *retryv2.Policy
}

// newV2 opens a v2 session on the node's keyspace ks (the driver's default protocol
// version), closed when t ends.
func newV2(t testing.TB, ks string) v2 {
	t.Helper()
	s := v2Via(t, node.Hosts()[0], ks, 15*time.Second, 0)
	return v2{s: s, p: retryv2.NewPolicy(retryv2.WithSchema(retryv2.SessionSchema(s)))}
}

// v2Via is a v2 session on keyspace ks whose every connection goes to addr (the node,
// or a fault proxy in front of it, which reads protocol v4), closed when the test ends;
// proto 0 is the driver's default protocol version.
func v2Via(t testing.TB, addr, ks string, timeout time.Duration, proto int) *gocqlv2.Session {
	t.Helper()
	cl := gocqlv2.NewCluster(addr)
	cl.Keyspace = ks
	cl.ProtoVersion = proto
	cl.Timeout = timeout
	cl.ConnectTimeout = 15 * time.Second
	cl.Consistency = gocqlv2.Quorum
	cl.NumConns = 2
	// One node, reached at addr whatever address it announces (a published port when it
	// runs in a container, or the proxy).
	cl.DisableInitialHostLookup = true
	if host, port, err := net.SplitHostPort(addr); err == nil {
		p, _ := strconv.Atoi(port)
		ip := net.ParseIP(host)
		if ip == nil {
			if ips, err := net.LookupIP(host); err == nil && len(ips) > 0 {
				ip = ips[0]
			}
		}
		cl.AddressTranslator = gocqlv2.AddressTranslatorFunc(func(net.IP, int) (net.IP, int) { return ip, p })
	}
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatalf("v2 session: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// rowToV2 is a row with its values mapped to the v2 driver's types.
func rowToV2(row map[string]any) map[string]any {
	out := make(map[string]any, len(row))
	for k, v := range row {
		out[k] = valueToV2(v)
	}
	return out
}

func (d v2) decide(keyspace, cql string, values []any, ts int64) (bool, []string) {
	var vs []any
	if values != nil {
		vs = toV2(values)
	}
	v := d.p.RepeatableAt(keyspace, cql, vs, ts)
	return v.Idempotent, v.Reasons
}

func (d v2) query(ctx context.Context, text string, values []any, ts int64) error {
	return d.s.Query(text, toV2(values)...).WithTimestamp(ts).ExecContext(ctx)
}

func (d v2) batch(ctx context.Context, typ string, texts []string, values [][]any, ts int64) error {
	t := gocqlv2.LoggedBatch
	switch typ {
	case "UNLOGGED":
		t = gocqlv2.UnloggedBatch
	case "COUNTER":
		t = gocqlv2.CounterBatch
	}
	b := d.s.Batch(t).WithTimestamp(ts)
	for i, text := range texts {
		b.Query(text, toV2(values[i])...)
	}
	return b.ExecContext(ctx)
}

func (v2) rejected(err error) bool {
	var re gocqlv2.RequestError
	if errors.As(err, &re) {
		return re.Code() == gocqlv2.ErrCodeInvalid || re.Code() == gocqlv2.ErrCodeSyntax
	}
	return false
}

// vectorV2 and nullV2 are vector and null for the v2 driver's Marshaler.
type (
	vectorV2 vector
	nullV2   struct{}
)

func (v vectorV2) MarshalCQL(ti gocqlv2.TypeInfo) ([]byte, error) { return vector(v).MarshalCQL(nil) }
func (nullV2) MarshalCQL(gocqlv2.TypeInfo) ([]byte, error)        { return nil, nil }

var (
	uuidV1, uuidV2         = reflect.TypeFor[gocql.UUID](), reflect.TypeFor[gocqlv2.UUID]()
	durationV1, durationV2 = reflect.TypeFor[gocql.Duration](), reflect.TypeFor[gocqlv2.Duration]()
)

// toV2 maps bound values to the v2 driver's types: gocql v1.7's UUID and Duration, UNSET
// and the generator's Marshalers, also inside slices, maps, arrays and pointers.
func toV2(values []any) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = valueToV2(v)
	}
	return out
}

func valueToV2(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case vector:
		if x == nil {
			return vectorV2(nil)
		}
		return vectorV2(x)
	case null:
		return nullV2{}
	}
	if v == gocql.UnsetValue {
		return gocqlv2.UnsetValue
	}
	rv := reflect.ValueOf(v)
	if !needsV2(rv.Type()) {
		return v
	}
	return convertToV2(rv, typeToV2(rv.Type())).Interface()
}

// needsV2: a value of type t may hold something of gocql v1.7's own (statically, or
// behind an interface).
func needsV2(t reflect.Type) bool {
	switch {
	case t == uuidV1 || t == durationV1 || t.Kind() == reflect.Interface:
		return true
	case t.Kind() == reflect.Map:
		return needsV2(t.Key()) || needsV2(t.Elem())
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Pointer:
		return needsV2(t.Elem())
	}
	return false
}

func typeToV2(t reflect.Type) reflect.Type {
	switch t {
	case uuidV1:
		return uuidV2
	case durationV1:
		return durationV2
	}
	switch t.Kind() {
	case reflect.Slice:
		if e := typeToV2(t.Elem()); e != t.Elem() {
			return reflect.SliceOf(e)
		}
	case reflect.Array:
		if e := typeToV2(t.Elem()); e != t.Elem() {
			return reflect.ArrayOf(t.Len(), e)
		}
	case reflect.Pointer:
		if e := typeToV2(t.Elem()); e != t.Elem() {
			return reflect.PointerTo(e)
		}
	case reflect.Map:
		k, e := typeToV2(t.Key()), typeToV2(t.Elem())
		if k != t.Key() || e != t.Elem() {
			return reflect.MapOf(k, e)
		}
	}
	return t
}

// convertToV2 copies v into a value of type t (typeToV2 of v's type, or an interface
// whose elements are mapped one by one).
func convertToV2(v reflect.Value, t reflect.Type) reflect.Value {
	switch {
	case v.Kind() == reflect.Interface:
		if v.IsNil() {
			return reflect.Zero(t)
		}
		if x := valueToV2(v.Elem().Interface()); x != nil {
			return reflect.ValueOf(x)
		}
		return reflect.Zero(t)
	case v.Type() == uuidV1:
		return v.Convert(uuidV2)
	case v.Type() == durationV1:
		d := v.Interface().(gocql.Duration)
		return reflect.ValueOf(gocqlv2.Duration{Months: d.Months, Days: d.Days, Nanoseconds: d.Nanoseconds})
	}
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(t)
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(convertToV2(v.Index(i), t.Elem()))
		}
		return out
	case reflect.Array:
		out := reflect.New(t).Elem()
		for i := range v.Len() {
			out.Index(i).Set(convertToV2(v.Index(i), t.Elem()))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(t)
		}
		out := reflect.New(t.Elem())
		out.Elem().Set(convertToV2(v.Elem(), t.Elem()))
		return out
	case reflect.Map:
		if v.IsNil() {
			return reflect.Zero(t)
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(convertToV2(it.Key(), t.Key()), convertToV2(it.Value(), t.Elem()))
		}
		return out
	}
	return v
}
