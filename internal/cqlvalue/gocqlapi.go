package cqlvalue

import (
	"errors"
	"net"
	"reflect"
	"unsafe"

	"github.com/gocql/gocql"
)

// The root module builds against gocql v1.7 and against the ScyllaDB fork
// (github.com/scylladb/gocql v1.15–v1.18), which gocqlx users put under gocql's import
// path with a replace directive. The two differ in a few exported names, so the code
// that touches those names reaches them here, by reflection, and compiles on both:
//
//   - ColumnMetadata: v1.7 has Validator (the type's text) and Type (a TypeInfo); the
//     fork has Type as the text and no TypeInfo.
//   - KeyspaceMetadata: v1.7's user types are UserTypes, the fork's Types.
//   - NewNativeType: v1.7 and fork v1.15 take (proto, type, custom); fork v1.18 takes
//     (proto, type) and sets a custom class name with NewCustomType.
//
// Every other difference is behaviour, which the retry policy does not depend on: it
// sets its own RetryPolicy and idempotent flag on every execution.

// ColumnTypeText is the column's type as system_schema writes it ("list<int>",
// "frozen<address>"): v1.7's Validator, the fork's Type.
func ColumnTypeText(cm *gocql.ColumnMetadata) string {
	if cm == nil {
		return ""
	}
	v := reflect.ValueOf(cm).Elem()
	if f := v.FieldByName("Validator"); f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	if f := v.FieldByName("Type"); f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}

// ColumnTypeInfo is the driver's own TypeInfo of the column: v1.7's Type; nil on the
// fork, whose metadata holds only the text.
func ColumnTypeInfo(cm *gocql.ColumnMetadata) gocql.TypeInfo {
	if cm == nil {
		return nil
	}
	f := reflect.ValueOf(cm).Elem().FieldByName("Type")
	if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
		return nil
	}
	ti, _ := f.Interface().(gocql.TypeInfo)
	return ti
}

// SetColumnType sets a column's type text (and, on v1.7, its TypeInfo ti, when not nil):
// for building metadata by hand, as tests and FromMetadata's callers do.
func SetColumnType(cm *gocql.ColumnMetadata, text string, ti gocql.TypeInfo) {
	v := reflect.ValueOf(cm).Elem()
	if f := v.FieldByName("Validator"); f.IsValid() && f.Kind() == reflect.String {
		f.SetString(text)
		if t := v.FieldByName("Type"); ti != nil && t.IsValid() && t.Kind() == reflect.Interface {
			t.Set(reflect.ValueOf(ti))
		}
		return
	}
	if f := v.FieldByName("Type"); f.IsValid() && f.Kind() == reflect.String {
		f.SetString(text)
	}
}

// HasUserTypes reports whether the keyspace's metadata lists user-defined types.
func HasUserTypes(km *gocql.KeyspaceMetadata) bool {
	if km == nil {
		return false
	}
	v := reflect.ValueOf(km).Elem()
	for _, name := range []string{"UserTypes", "Types"} {
		if f := v.FieldByName(name); f.IsValid() && f.Kind() == reflect.Map {
			return f.Len() > 0
		}
	}
	return false
}

// newNativeType is gocql.NewNativeType, whichever arity it has.
var newNativeType = reflect.ValueOf(gocql.NewNativeType)

// NativeType is gocql.NewNativeType(proto, typ, custom) on every driver: where
// NewNativeType takes no custom class name (fork v1.18), the name is written into the
// value's unexported field, as the fork's NewCustomType does.
func NativeType(proto byte, typ gocql.Type, custom string) gocql.NativeType {
	t := newNativeType.Type()
	args := []reflect.Value{reflect.ValueOf(proto).Convert(t.In(0)), reflect.ValueOf(typ)}
	if t.NumIn() == 3 {
		args = append(args, reflect.ValueOf(custom))
		return newNativeType.Call(args)[0].Interface().(gocql.NativeType)
	}
	nt := newNativeType.Call(args)[0].Interface().(gocql.NativeType)
	if custom != "" {
		v := reflect.ValueOf(&nt).Elem().FieldByName("custom")
		if v.IsValid() && v.Kind() == reflect.String {
			reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem().SetString(custom)
		}
	}
	return nt
}

// Column is a column's metadata as the driver's KeyspaceMetadata holds it, with its
// type's text and, on gocql v1.7, the driver's TypeInfo ti (nil: none): for metadata
// built by hand, on every driver.
func Column(name string, kind gocql.ColumnKind, text string, ti gocql.TypeInfo) *gocql.ColumnMetadata {
	cm := &gocql.ColumnMetadata{Name: name, Kind: kind}
	SetColumnType(cm, text, ti)
	return cm
}

// Host is a host built by hand (tests, tools) with a connect address and a host id (a
// UUID's text: fork v1.18 keeps a UUID), on every driver: gocql v1.7 and fork v1.15
// have SetConnectAddress and SetHostID; fork v1.18 has neither, and the fields are set
// directly.
func Host(addr net.IP, id string) *gocql.HostInfo {
	h := &gocql.HostInfo{}
	set := func(field string, v reflect.Value) {
		f := reflect.ValueOf(h).Elem().FieldByName(field)
		if f.IsValid() && f.Type() == v.Type() {
			reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(v)
		}
	}
	if addr != nil {
		if s, ok := any(h).(interface{ SetConnectAddress(net.IP) *gocql.HostInfo }); ok {
			s.SetConnectAddress(addr)
		} else {
			set("connectAddress", reflect.ValueOf(addr))
		}
	}
	if id != "" {
		if s, ok := any(h).(interface{ SetHostID(string) }); ok {
			s.SetHostID(id)
		} else if u, err := gocql.ParseUUID(id); err == nil {
			set("hostId", reflect.ValueOf(u)) // fork v1.18 keeps the id as a UUID
		} else {
			set("hostId", reflect.ValueOf(id))
		}
	}
	return h
}

// NoRetry is a retry policy that never retries, for LWTs sent outside a retry.Policy: a
// re-sent LWT that had applied sees its own row and answers [applied]=false. A nil
// policy is not enough: the ScyllaDB fork takes nil for SimpleRetryPolicy{3}.
type NoRetry struct{}

// Attempt implements gocql.RetryPolicy.
func (NoRetry) Attempt(gocql.RetryableQuery) bool { return false }

// GetRetryType implements gocql.RetryPolicy.
func (NoRetry) GetRetryType(error) gocql.RetryType { return gocql.Rethrow }

// MarksAnswers reports whether the driver marks the host of a request that was answered
// (SelectedHost.Mark(nil)), which the hedge delay estimator times. gocql v1.7 does; the
// ScyllaDB fork marks only failures, so its hedges fire at the upper delay bound. The
// fork is told apart by its SelectedHost's Token method.
func MarksAnswers() bool {
	_, fork := reflect.TypeFor[gocql.SelectedHost]().MethodByName("Token")
	return !fork
}

// TypeInfos reports whether the driver's schema metadata holds a TypeInfo per column
// (gocql v1.7), besides the type's text (the fork has the text alone).
func TypeInfos() bool {
	f, ok := reflect.TypeFor[gocql.ColumnMetadata]().FieldByName("Type")
	return ok && f.Type.Kind() == reflect.Interface
}

// RequestError is the protocol error code and message of a server error err holds:
// gocql.RequestError (Code, Message), or the ScyllaDB fork v1.18's frame.ErrorFrame for
// the codes it has no type of its own for (GetCode, GetMessage: Overloaded, Invalid,
// Bootstrapping, …); ok false when err holds neither.
func RequestError(err error) (code int, msg string, ok bool) {
	var re gocql.RequestError
	if errors.As(err, &re) {
		return re.Code(), re.Message(), true
	}
	var fe interface {
		GetCode() int
		GetMessage() string
	}
	if errors.As(err, &fe) {
		return fe.GetCode(), fe.GetMessage(), true
	}
	return 0, "", false
}

// forkNotSent are the texts of the ScyllaDB fork's errors for a host its executor did
// not send to — query_executor.go's ErrHostDown, ErrNoPool and ErrNoConnectionsInPool,
// which gocql v1.7 does not have, so they are matched by their fixed text. The fork
// tries the next host after each and, when none is left, returns the last, wrapped in
// its QueryError.
var forkNotSent = [...]string{
	"gocql: host is nil or down",
	"gocql: host does not have a pool",
	"gocql: host pool does not have connections",
}

// NoConnection reports whether err says the driver found no connection to send on:
// gocql's ErrNoConnections, or one of the fork's per-host errors (forkNotSent) anywhere
// in err's chain.
func NoConnection(err error) bool {
	if errors.Is(err, gocql.ErrNoConnections) {
		return true
	}
	var walk func(error) bool
	walk = func(e error) bool {
		for e != nil {
			for _, s := range forkNotSent {
				if e.Error() == s {
					return true
				}
			}
			switch u := e.(type) {
			case interface{ Unwrap() []error }:
				for _, c := range u.Unwrap() {
					if walk(c) {
						return true
					}
				}
				return false
			case interface{ Unwrap() error }:
				e = u.Unwrap()
			default:
				return false
			}
		}
		return false
	}
	return walk(err)
}

// PotentiallyExecuted reports whether err is the ScyllaDB fork's QueryError saying an
// earlier attempt of the execution may have run (gocql v1.7 has no such error).
func PotentiallyExecuted(err error) bool {
	var pe interface{ PotentiallyExecuted() bool }
	return errors.As(err, &pe) && pe.PotentiallyExecuted()
}
