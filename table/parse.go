package table

import (
	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// userType is a user-defined type as system_schema.types holds it.
type userType = cqltype.UserType

// typeParser turns a column's CQL type text (system_schema.columns.type, e.g.
// "frozen<list<frozen<address>>>") into a gocql TypeInfo. gocql v1.7.0's schema
// metadata leaves user-defined types as custom() and vectors as custom, which can be
// neither marshalled nor scanned; built from the text and the keyspace's user types,
// they can. The text is parsed by the driver-neutral cqltype; this maps its tree.
type typeParser struct {
	keyspace string
	udts     map[string]userType // by name as stored (unquoted)
}

var nativeTypes = map[string]gocql.Type{
	"ascii": gocql.TypeAscii, "bigint": gocql.TypeBigInt, "blob": gocql.TypeBlob, "boolean": gocql.TypeBoolean,
	"counter": gocql.TypeCounter, "date": gocql.TypeDate, "decimal": gocql.TypeDecimal, "double": gocql.TypeDouble,
	"duration": gocql.TypeDuration, "float": gocql.TypeFloat, "inet": gocql.TypeInet, "int": gocql.TypeInt,
	"smallint": gocql.TypeSmallInt, "text": gocql.TypeText, "varchar": gocql.TypeVarchar, "time": gocql.TypeTime,
	"timestamp": gocql.TypeTimestamp, "timeuuid": gocql.TypeTimeUUID, "tinyint": gocql.TypeTinyInt,
	"uuid": gocql.TypeUUID, "varint": gocql.TypeVarint,
}

// parse returns the TypeInfo of the CQL type text s.
func (p *typeParser) parse(s string) (gocql.TypeInfo, error) {
	t, err := (&cqltype.Parser{Keyspace: p.keyspace, UDTs: p.udts}).Parse(s)
	if err != nil {
		return nil, err
	}
	return gocqlType(t), nil
}

// gocqlType is gocql v1.7's TypeInfo of a type tree (frozen or not: gocql does not say).
func gocqlType(t cqltype.Type) gocql.TypeInfo {
	native := func(typ gocql.Type) gocql.NativeType { return gocql.NewNativeType(protoVersion, typ, "") }
	switch t.Kind {
	case cqltype.List:
		return gocql.CollectionType{NativeType: native(gocql.TypeList), Elem: gocqlType(t.Params[0])}
	case cqltype.Set:
		return gocql.CollectionType{NativeType: native(gocql.TypeSet), Elem: gocqlType(t.Params[0])}
	case cqltype.Map:
		return gocql.CollectionType{NativeType: native(gocql.TypeMap), Key: gocqlType(t.Params[0]), Elem: gocqlType(t.Params[1])}
	case cqltype.Tuple:
		out := gocql.TupleTypeInfo{NativeType: native(gocql.TypeTuple)}
		for _, e := range t.Params {
			out.Elems = append(out.Elems, gocqlType(e))
		}
		return out
	case cqltype.Vector:
		return cqlvalue.NewVectorType(protoVersion, gocqlType(t.Params[0]), t.Dim)
	case cqltype.UDT:
		out := gocql.UDTTypeInfo{NativeType: native(gocql.TypeUDT), KeySpace: t.Keyspace, Name: t.Name}
		for i, f := range t.Fields {
			out.Elements = append(out.Elements, gocql.UDTField{Name: f, Type: gocqlType(t.Params[i])})
		}
		return out
	}
	return native(nativeTypes[t.Name])
}
