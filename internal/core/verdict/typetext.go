package verdict

import "strings"

// ColumnKindOfType is the ColumnKind of a column whose type text is typ, as a driver's
// schema metadata gives it: CQL (system_schema's columns.type, Cassandra 3.0 and
// later: "list<frozen<address>>", "frozen<set<int>>", "counter") or a marshal class
// (system.schema_columns' validator before 3.0:
// "org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.Int32Type)").
// A non-frozen list, set or map by its outermost type whatever its elements are, a
// counter; every other CQL type one cell overwritten whole (ColumnScalar) — frozen
// collections, tuples, vectors, UDTs as the drivers' metadata reports them. A text it
// cannot read (empty, a class it does not know) is ColumnUnknown: judged by the value
// bound to it. Drivers that cannot parse a type (the Apache driver v2 does not know UDT
// names inside a collection) still give its text.
func ColumnKindOfType(typ string) ColumnKind {
	t := strings.TrimSpace(typ)
	if strings.HasPrefix(t, "org.apache.cassandra.db.marshal.") {
		return kindOfClass(t)
	}
	t = strings.ToLower(t)
	head, _, _ := strings.Cut(t, "<")
	switch strings.TrimSpace(head) {
	case "":
		return ColumnUnknown
	case "counter":
		return ColumnCounter
	case "list":
		return ColumnList
	case "set":
		return ColumnSet
	case "map":
		return ColumnMap
	}
	return ColumnScalar
}

// kindOfClass reads a marshal class name: ReversedType(X) is X (a clustering order),
// FrozenType(X) one cell, ListType/SetType/MapType non-frozen collections,
// CounterColumnType a counter; other known scalar classes are one cell.
func kindOfClass(t string) ColumnKind {
	const pkg = "org.apache.cassandra.db.marshal."
	name, arg, _ := strings.Cut(strings.TrimPrefix(t, pkg), "(")
	switch name {
	case "ReversedType":
		return kindOfClass(strings.TrimSuffix(strings.TrimSpace(arg), ")"))
	case "FrozenType", "TupleType", "UserType", "VectorType":
		return ColumnScalar
	case "ListType":
		return ColumnList
	case "SetType":
		return ColumnSet
	case "MapType":
		return ColumnMap
	case "CounterColumnType":
		return ColumnCounter
	case "AsciiType", "LongType", "BytesType", "BooleanType", "DecimalType", "DoubleType", "FloatType",
		"InetAddressType", "Int32Type", "UTF8Type", "TimestampType", "DateType", "UUIDType", "IntegerType",
		"TimeUUIDType", "SimpleDateType", "TimeType", "ShortType", "ByteType", "DurationType":
		return ColumnScalar
	}
	return ColumnUnknown
}

// KeyTypeOfType is the KeyType of a column's type text as system_schema writes it
// ("text", "bigint", "timeuuid"): what a driver's metadata gives on every driver (the
// ScyllaDB fork's metadata holds the text alone). Anything else — frozen types, other
// scalars, a class name — is KeyOther.
func KeyTypeOfType(typ string) KeyType {
	t := strings.ToLower(strings.TrimSpace(typ))
	if strings.HasPrefix(t, "org.apache.cassandra.db.marshal.") {
		t = strings.TrimPrefix(t, "org.apache.cassandra.db.marshal.")
		if inner, ok := strings.CutPrefix(t, "reversedtype("); ok {
			return KeyTypeOfType(strings.TrimSuffix(inner, ")"))
		}
		t = map[string]string{"utf8type": "text", "asciitype": "ascii", "int32type": "int", "longtype": "bigint",
			"shorttype": "smallint", "bytetype": "tinyint", "integertype": "varint", "simpledatetype": "date",
			"decimaltype": "decimal", "doubletype": "double", "floattype": "float", "booleantype": "boolean",
			"uuidtype": "uuid", "timeuuidtype": "timeuuid"}[t]
	}
	switch t {
	case "text", "varchar", "ascii":
		return KeyText
	case "tinyint", "smallint", "int", "bigint":
		return KeyInteger
	case "varint":
		return KeyVarint
	case "date":
		return KeyDate
	case "decimal":
		return KeyDecimal
	case "double":
		return KeyDouble
	case "float":
		return KeyFloat
	case "boolean":
		return KeyBoolean
	case "uuid", "timeuuid":
		return KeyUUID
	}
	return KeyOther
}
