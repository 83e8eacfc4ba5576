package table

import (
	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// protoVersion is the protocol version type infos are stamped with for client-side
// marshalling checks. Schema metadata leaves it unset, and gocql's collection
// marshalling panics without it.
const protoVersion = 4

// withProto returns ti with the protocol version set throughout.
func withProto(ti gocql.TypeInfo) gocql.TypeInfo {
	switch t := ti.(type) {
	case gocql.NativeType:
		return gocql.NewNativeType(protoVersion, t.Type(), t.Custom())
	case gocql.CollectionType:
		out := gocql.CollectionType{NativeType: gocql.NewNativeType(protoVersion, t.Type(), t.Custom())}
		if t.Key != nil {
			out.Key = withProto(t.Key)
		}
		if t.Elem != nil {
			out.Elem = withProto(t.Elem)
		}
		return out
	case gocql.TupleTypeInfo:
		out := gocql.TupleTypeInfo{NativeType: gocql.NewNativeType(protoVersion, t.Type(), t.Custom())}
		for _, e := range t.Elems {
			out.Elems = append(out.Elems, withProto(e))
		}
		return out
	case gocql.UDTTypeInfo:
		out := gocql.UDTTypeInfo{NativeType: gocql.NewNativeType(protoVersion, t.Type(), t.Custom()), KeySpace: t.KeySpace, Name: t.Name}
		for _, e := range t.Elements {
			out.Elements = append(out.Elements, gocql.UDTField{Name: e.Name, Type: withProto(e.Type)})
		}
		return out
	}
	return ti
}

// marshal is gocql.Marshal that also encodes vectors and turns a panic inside gocql
// into an error.
func marshal(ti gocql.TypeInfo, v any) ([]byte, error) { return cqlvalue.Marshal(ti, v) }

// fits reports whether v can be bound to a column of type ti, without allocating for
// the common pairs (string→text, int→int, …) and by marshalling for the rest.
func fits(ti gocql.TypeInfo, v any) error {
	typ := ti.Type()
	switch x := v.(type) {
	case string:
		if typ == gocql.TypeVarchar || typ == gocql.TypeText || typ == gocql.TypeAscii && isASCII(x) {
			return nil
		}
	case int32, int16, int8:
		if typ == gocql.TypeInt || typ == gocql.TypeBigInt {
			return nil
		}
	case int:
		if typ == gocql.TypeBigInt || typ == gocql.TypeInt && int(int32(x)) == x {
			return nil
		}
	case int64:
		if typ == gocql.TypeBigInt {
			return nil
		}
	case bool:
		if typ == gocql.TypeBoolean {
			return nil
		}
	case []byte:
		if typ == gocql.TypeBlob {
			return nil
		}
	case float64:
		if typ == gocql.TypeDouble {
			return nil
		}
	case float32:
		if typ == gocql.TypeFloat {
			return nil
		}
	case gocql.UUID:
		if typ == gocql.TypeUUID {
			return nil
		}
	}
	_, err := marshal(ti, v)
	return err
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
