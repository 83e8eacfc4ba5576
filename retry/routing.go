package retry

import (
	"reflect"
	"unsafe"

	"github.com/gocql/gocql"
)

// routingInfo is gocql.Query's unexported routingInfo field (a *queryRoutingInfo).
var routingInfo, routingInfoOK = func() (reflect.StructField, bool) {
	f, ok := reflect.TypeFor[gocql.Query]().FieldByName("routingInfo")
	return f, ok && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct
}()

// ownRouting gives q — a copy made by WithContext for a hedge — a routing-info record
// of its own, and says whether it could.
//
// gocql v1.7.0 copies a Query by value, and the copies share its routing info (the
// keyspace and table, behind a pointer). Its executor writes that record, under a lock,
// on every execution of a prepared statement; Query.Keyspace reads it without the lock,
// and the token-aware policy calls Keyspace in Pick. A hedge beside the first execution
// is two executions of copies at once: they race on the record (TestHedgeOwnRoutingInfo
// under -race). With a record of its own, the hedge fills it as any fresh Query does
// (GetRoutingKey, then the executor) and reads only its own. gocql's v1 line ends at
// v1.7.0, so the field does not move; were it missing, q is left as it is and the test
// fails.
func ownRouting(q *gocql.Query) bool {
	if !routingInfoOK {
		return false
	}
	field := reflect.NewAt(routingInfo.Type, unsafe.Add(unsafe.Pointer(q), routingInfo.Offset)).Elem()
	field.Set(reflect.New(routingInfo.Type.Elem()))
	return true
}
