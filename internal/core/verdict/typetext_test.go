package verdict

import "testing"

func TestColumnKindOfType(t *testing.T) {
	for typ, want := range map[string]ColumnKind{
		"list<int>":                  ColumnList,
		"list<frozen<address>>":      ColumnList,
		" LIST < frozen<\"Addr\">>":  ColumnList,
		"set<frozen<address>>":       ColumnSet,
		"map<text, frozen<address>>": ColumnMap,
		"frozen<list<int>>":          ColumnScalar,
		"frozen<address>":            ColumnScalar,
		"address":                    ColumnScalar,
		"tuple<int, text>":           ColumnScalar,
		"vector<float, 3>":           ColumnScalar,
		"counter":                    ColumnCounter,
		"text":                       ColumnScalar,
		"":                           ColumnUnknown,
	} {
		if got := ColumnKindOfType(typ); got != want {
			t.Errorf("ColumnKindOfType(%q) = %v, want %v", typ, got, want)
		}
	}
}

func TestVerdictKeyTypeOfType(t *testing.T) {
	for typ, want := range map[string]KeyType{
		"text": KeyText, "varchar": KeyText, " ASCII ": KeyText, "int": KeyInteger, "bigint": KeyInteger,
		"tinyint": KeyInteger, "varint": KeyVarint, "date": KeyDate, "decimal": KeyDecimal, "double": KeyDouble,
		"float": KeyFloat, "boolean": KeyBoolean, "uuid": KeyUUID, "timeuuid": KeyUUID,
		"frozen<list<int>>": KeyOther, "timestamp": KeyOther, "blob": KeyOther, "": KeyOther,
		"org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.Int32Type)": KeyInteger,
		"org.apache.cassandra.db.marshal.UTF8Type":                                                KeyText,
	} {
		if got := KeyTypeOfType(typ); got != want {
			t.Errorf("KeyTypeOfType(%q) = %v, want %v", typ, got, want)
		}
	}
}
