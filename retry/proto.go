package retry

import (
	"fmt"
	"reflect"

	"github.com/gocql/gocql"
)

// Protocol versions 1 and 2 carry no client timestamp: gocql sends WithTimestamp only
// from v3 on, so under v1 or v2 the pinned timestamp would be dropped in silence and
// every attempt would take the coordinator's own — a retry landing as a second write.
// Cassandra 3.0 and later speak v3 at least; a session forced to v1 or v2 (ProtoVersion)
// against Cassandra 2.x is refused before anything is sent.

// errNoClientTimestamps is the refusal of a pinned write under protocol v1 or v2.
func errNoClientTimestamps(v int64) error {
	return fmt.Errorf("retry: the session speaks CQL protocol v%d, which carries no client timestamp: the pinned write timestamp would be dropped (use protocol v3 or later; nothing was sent)", v)
}

// The field paths gocql keeps a query's session and a session's protocol version under
// (Query.session, Session.cfg.ProtoVersion); nil where this gocql has no such field, and
// then nothing is checked. Not on the ScyllaDB fork (its ColumnMetadata has no
// Validator): it speaks v3 at least — it refuses any lower response version — and its
// NewSessionNonBlocking sets the version on a goroutine of its own, which a read here
// would race.
var (
	querySessionField = fieldPath(reflect.TypeOf(gocql.Query{}), "session")
	sessionProtoField = func() []int {
		if _, v17 := reflect.TypeOf(gocql.ColumnMetadata{}).FieldByName("Validator"); !v17 {
			return nil
		}
		return fieldPath(reflect.TypeOf(gocql.Session{}), "cfg", "ProtoVersion")
	}()
)

func fieldPath(t reflect.Type, names ...string) []int {
	var path []int
	for _, n := range names {
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := t.FieldByName(n)
		if !ok || len(f.Index) != 1 {
			return nil
		}
		path = append(path, f.Index[0])
		t = f.Type
	}
	return path
}

// sessionProto is the protocol version s negotiated (0: not known).
func sessionProto(s *gocql.Session) int64 {
	if s == nil || sessionProtoField == nil {
		return 0
	}
	f := reflect.ValueOf(s).Elem().FieldByIndex(sessionProtoField)
	if !f.CanInt() {
		return 0
	}
	return f.Int()
}

// querySessionProto is sessionProto of the session q was made on (0: not known).
func querySessionProto(q *gocql.Query) int64 {
	if querySessionField == nil {
		return 0
	}
	f := reflect.ValueOf(q).Elem().FieldByIndex(querySessionField)
	if f.Kind() != reflect.Pointer || f.IsNil() {
		return 0
	}
	if f.Type() != reflect.TypeOf((*gocql.Session)(nil)) {
		return 0
	}
	if sessionProtoField == nil {
		return 0
	}
	p := f.Elem().FieldByIndex(sessionProtoField)
	if !p.CanInt() {
		return 0
	}
	return p.Int()
}

// clientTimestamps refuses protocol versions without client timestamps (1 and 2).
func clientTimestamps(proto int64) error {
	if proto == 1 || proto == 2 {
		return errNoClientTimestamps(proto)
	}
	return nil
}
