package settle

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
)

// The tables the mapping tests settle against, as gocql's schema metadata describes them:
//
//	CREATE TABLE t   (k int, c text, s int static, v text, n int, l list<int>, st set<int>,
//	                  fl frozen<list<int>>, m map<text,int>, PRIMARY KEY (k, c))
//	CREATE TABLE kv  (id int PRIMARY KEY, v text, w int)
//	CREATE TABLE cnt (id int PRIMARY KEY, n counter)
//	CREATE TABLE u   (id uuid PRIMARY KEY, b blob, ok boolean)
//	CREATE TABLE "KV" ("Id" int PRIMARY KEY, "V" text)
func testSchema() tableLookup {
	native := func(t gocql.Type) gocql.TypeInfo { return cqlvalue.NativeType(4, t, "") }
	coll := func(t gocql.Type, key, elem gocql.TypeInfo) gocql.TypeInfo {
		return gocql.CollectionType{NativeType: cqlvalue.NativeType(4, t, ""), Key: key, Elem: elem}
	}
	type col struct {
		name      string
		kind      gocql.ColumnKind
		typ       gocql.TypeInfo
		validator string
	}
	table := func(ks, name string, cols ...col) *gocql.TableMetadata {
		tm := &gocql.TableMetadata{Keyspace: ks, Name: name, Columns: map[string]*gocql.ColumnMetadata{}}
		for _, c := range cols {
			cm := cqlvalue.Column(c.name, c.kind, c.validator, c.typ)
			cm.Keyspace, cm.Table = ks, name
			tm.Columns[c.name] = cm
			switch c.kind {
			case gocql.ColumnPartitionKey:
				tm.PartitionKey = append(tm.PartitionKey, cm)
			case gocql.ColumnClusteringKey:
				tm.ClusteringColumns = append(tm.ClusteringColumns, cm)
			}
		}
		return tm
	}
	intT, textT := native(gocql.TypeInt), native(gocql.TypeVarchar)
	tables := map[string]*gocql.TableMetadata{
		"t": table("ks", "t",
			col{"k", gocql.ColumnPartitionKey, intT, "int"},
			col{"c", gocql.ColumnClusteringKey, textT, "text"},
			col{"s", gocql.ColumnStatic, intT, "int"},
			col{"v", gocql.ColumnRegular, textT, "text"},
			col{"n", gocql.ColumnRegular, intT, "int"},
			col{"l", gocql.ColumnRegular, coll(gocql.TypeList, nil, intT), "list<int>"},
			col{"st", gocql.ColumnRegular, coll(gocql.TypeSet, nil, intT), "set<int>"},
			col{"fl", gocql.ColumnRegular, coll(gocql.TypeList, nil, intT), "frozen<list<int>>"},
			col{"m", gocql.ColumnRegular, coll(gocql.TypeMap, textT, intT), "map<text, int>"}),
		"kv": table("ks", "kv",
			col{"id", gocql.ColumnPartitionKey, intT, "int"},
			col{"v", gocql.ColumnRegular, textT, "text"},
			col{"w", gocql.ColumnRegular, intT, "int"}),
		"cnt": table("ks", "cnt",
			col{"id", gocql.ColumnPartitionKey, intT, "int"},
			col{"n", gocql.ColumnRegular, native(gocql.TypeCounter), "counter"}),
		"u": table("ks", "u",
			col{"id", gocql.ColumnPartitionKey, native(gocql.TypeUUID), "uuid"},
			col{"b", gocql.ColumnRegular, native(gocql.TypeBlob), "blob"},
			col{"ok", gocql.ColumnRegular, native(gocql.TypeBoolean), "boolean"}),
		"KV": table("ks", "KV",
			col{"Id", gocql.ColumnPartitionKey, intT, "int"},
			col{"V", gocql.ColumnRegular, textT, "text"}),
	}
	return func(ks, name string) (*gocql.TableMetadata, error) {
		switch ks {
		case "ks", "other":
			return tables[name], nil
		}
		return nil, fmt.Errorf("keyspace %s does not exist", ks)
	}
}

func TestSettlePlanSettle(t *testing.T) {
	uid := gocql.MustRandomUUID()
	lit, _ := gocql.ParseUUID("550e8400-e29b-41d4-a716-446655440000")
	const pinned = 1000
	tests := []struct {
		name    string
		cql     string
		values  []any
		regular []string
		static  []string
		key     []any // the primary key values read with
		ts      int64
		skipped int
		table   string // keyspace.table when not ks.kv
		err     string // substring of the error; "" for none
	}{
		{name: "insert", cql: `INSERT INTO kv (id, v) VALUES (?, ?)`, values: []any{1, "x"}, regular: []string{"v"}, key: []any{1}},
		{name: "insert, keyspace named", cql: `INSERT INTO other.kv (id, v, w) VALUES (?, ?, ?)`, values: []any{1, "x", 2}, regular: []string{"v", "w"}, key: []any{1}, table: "other.kv"},
		{name: "insert, literal key and value", cql: `insert into kv (v, id) values ('it''s', -7);`, regular: []string{"v"}, key: []any{int64(-7)}},
		{name: "insert, server function in a value cell", cql: `INSERT INTO kv (id, w) VALUES (?, toUnixTimestamp(now()))`, values: []any{1}, regular: []string{"w"}, key: []any{1}},
		{name: "insert, quoted names", cql: `INSERT INTO "KV" ("Id", "V") VALUES (?, ?)`, values: []any{3, "x"}, regular: []string{"V"}, key: []any{3}, table: "ks.KV"},
		{name: "insert, uuid and blob literals", cql: `INSERT INTO u (id, b, ok) VALUES (550e8400-e29b-41d4-a716-446655440000, 0xCAFE, true)`, regular: []string{"b", "ok"}, key: []any{[16]byte(lit)}, table: "ks.u"},
		{name: "insert, bound uuid", cql: `INSERT INTO u (id, b) VALUES (?, ?)`, values: []any{uid, []byte{1}}, regular: []string{"b"}, key: []any{uid}, table: "ks.u"},
		{name: "update, regular and static", cql: `UPDATE t SET v = ?, s = ? WHERE k = ? AND c = ?`, values: []any{"x", 1, 5, "a"}, regular: []string{"v"}, static: []string{"s"}, key: []any{5, "a"}, table: "ks.t"},
		{name: "update, static only by partition", cql: `UPDATE t SET s = ? WHERE k = ?`, values: []any{1, 5}, static: []string{"s"}, key: []any{5}, table: "ks.t"},
		{name: "update, collections: add read, remove skipped", cql: `UPDATE t SET st = st + ?, l = l - ?, m['a'] = ? WHERE k = ? AND c = ?`, values: []any{[]int{1}, []int{2}, 3, 5, "a"}, regular: []string{"st", "m"}, skipped: 1, key: []any{5, "a"}, table: "ks.t"},
		{name: "update, prepend", cql: `UPDATE t SET l = ? + l WHERE k = 1 AND c = 'a'`, values: []any{[]int{1}}, regular: []string{"l"}, key: []any{int64(1), "a"}, table: "ks.t"},
		{name: "update, empty collections", cql: `UPDATE t SET l = [], st = ?, fl = [] WHERE k = 1 AND c = 'a'`, values: []any{[]int{}}, regular: []string{"fl"}, skipped: 2, key: []any{int64(1), "a"}, table: "ks.t"},
		{name: "update, own bound timestamp", cql: `UPDATE t USING TTL ? AND TIMESTAMP ? SET v = ? WHERE k = ? AND c = ?`, values: []any{gocql.UnsetValue, int64(42), "x", 1, "a"}, regular: []string{"v"}, key: []any{1, "a"}, ts: 42, table: "ks.t"},
		{name: "insert, own literal timestamp", cql: `INSERT INTO kv (id, v) VALUES (?, ?) USING TTL 60 AND TIMESTAMP 99`, values: []any{1, "x"}, regular: []string{"v"}, key: []any{1}, ts: 99},
		{name: "insert, timestamp bound unset keeps the pinned one", cql: `INSERT INTO kv (id, v) VALUES (?, ?) USING TIMESTAMP ?`, values: []any{1, "x", gocql.UnsetValue}, regular: []string{"v"}, key: []any{1}},
		{name: "insert, null and unset skipped", cql: `INSERT INTO kv (id, v, w) VALUES (?, ?, ?)`, values: []any{1, (*string)(nil), 4}, regular: []string{"w"}, skipped: 1, key: []any{1}},

		{name: "only nulls and unsets", cql: `INSERT INTO kv (id, v, w) VALUES (?, ?, null)`, values: []any{1, gocql.UnsetValue}, err: "writes no cell"},
		{name: "key columns only", cql: `INSERT INTO kv (id) VALUES (?)`, values: []any{1}, err: "writes no cell"},
		{name: "missing clustering column", cql: `UPDATE t SET v = ? WHERE k = ?`, values: []any{"x", 1}, err: "clustering column c"},
		{name: "missing partition key", cql: `UPDATE kv SET v = ? WHERE w = ?`, values: []any{"x", 1}, err: "partition key column id"},
		{name: "IN", cql: `UPDATE kv SET v = ? WHERE id IN (?, ?)`, values: []any{"x", 1, 2}, err: "does not name one row"},
		{name: "token", cql: `UPDATE kv SET v = ? WHERE token(id) = ?`, values: []any{"x", 1}, err: "does not name one row"},
		{name: "key from a function", cql: `INSERT INTO u (id, b) VALUES (uuid(), ?)`, values: []any{[]byte{1}}, err: "not a literal"},
		{name: "key bound null", cql: `INSERT INTO kv (id, v) VALUES (?, ?)`, values: []any{nil, "x"}, err: "null or unset"},
		{name: "value missing", cql: `INSERT INTO kv (id, v) VALUES (?, ?)`, values: []any{1}, err: "bind marker 2 has no value"},
		{name: "delete", cql: `DELETE FROM kv WHERE id = ?`, values: []any{1}, err: "DELETE"},
		{name: "counter", cql: `UPDATE cnt SET n = n + 1 WHERE id = ?`, values: []any{1}, err: "counter", table: "ks.cnt"},
		{name: "lwt", cql: `INSERT INTO kv (id, v) VALUES (?, ?) IF NOT EXISTS`, values: []any{1, "x"}, err: "LWT"},
		{name: "lwt update", cql: `UPDATE kv SET v = ? WHERE id = ? IF v = ?`, values: []any{"x", 1, "y"}, err: "LWT"},
		{name: "json", cql: `INSERT INTO kv JSON ?`, values: []any{`{"id": 1}`}, err: "INSERT JSON"},
		{name: "batch text", cql: `BEGIN BATCH INSERT INTO kv (id, v) VALUES (1, 'x'); APPLY BATCH`, err: "batch written as CQL text"},
		{name: "two statements", cql: `INSERT INTO kv (id, v) VALUES (1, 'x'); INSERT INTO kv (id, v) VALUES (2, 'x')`, err: "2 statements"},
		{name: "read", cql: `SELECT * FROM kv`, err: "not a write"},
		{name: "unknown table", cql: `INSERT INTO nope (id, v) VALUES (?, ?)`, values: []any{1, "x"}, err: "not in the schema"},
		{name: "unknown keyspace", cql: `INSERT INTO nope.kv (id, v) VALUES (?, ?)`, values: []any{1, "x"}, err: "does not exist"},
		{name: "unknown column", cql: `INSERT INTO kv (id, zz) VALUES (?, ?)`, values: []any{1, "x"}, err: "column zz"},
		{name: "not CQL", cql: `INSERT INTO kv (id, v) VALUES (1, 'x`, err: "not CQL"},
		{name: "column list mismatch", cql: `INSERT INTO kv (id, v) VALUES (?)`, values: []any{1}, err: "2 columns and 1 values"},
		{name: "literal of an unread type", cql: `INSERT INTO kv (id, v) VALUES ('1', 'x')`, err: "is not one it can read"},
	}
	lookup := testSchema()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := planSettle("ks", retry.Statement{CQL: tc.cql, Values: tc.values}, lookup, pinned)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			table := tc.table
			if table == "" {
				table = "ks.kv"
			}
			if got := plan.Keyspace + "." + plan.Table; got != table {
				t.Errorf("table %s, want %s", got, table)
			}
			if !slices.Equal(plan.Regular, tc.regular) || !slices.Equal(plan.Static, tc.static) {
				t.Errorf("regular %v static %v, want %v %v", plan.Regular, plan.Static, tc.regular, tc.static)
			}
			var key []any
			for _, k := range plan.Key {
				key = append(key, k.Value)
			}
			if !reflect.DeepEqual(key, tc.key) {
				t.Errorf("key %#v, want %#v", key, tc.key)
			}
			want := tc.ts
			if want == 0 {
				want = pinned
			}
			if plan.Timestamp != want {
				t.Errorf("timestamp %d, want %d", plan.Timestamp, want)
			}
			if len(plan.Skipped) != tc.skipped {
				t.Errorf("skipped %q, want %d", plan.Skipped, tc.skipped)
			}
		})
	}
}

// FuzzSettleMapping feeds any text to the statement→cells mapping and the LWT mapping:
// they return a plan or an error, never panic, and a plan they return names a table the
// schema knows, the whole partition key and at least one cell.
func FuzzSettleMapping(f *testing.F) {
	for _, s := range []string{
		`INSERT INTO kv (id, v) VALUES (?, ?)`,
		`UPDATE t USING TTL ? AND TIMESTAMP ? SET v = ?, s = ? WHERE k = ? AND c = ?`,
		`UPDATE t SET st = st + {1}, l = [1] + l, m['a'] = 1 WHERE k = 1 AND c = 'x' IF v = 'y' AND n != 3`,
		`DELETE v FROM kv WHERE id = ? IF EXISTS`,
		`INSERT INTO u (id, b) VALUES (550e8400-e29b-41d4-a716-446655440000, 0xCAFE) IF NOT EXISTS`,
		`UPDATE kv SET v = ? WHERE (id) = (?) IF w IN (1, 2)`,
		`INSERT INTO kv JSON '{"id": 1}'`,
		`UPDATE kv SET v = ? WHERE token(id) > ? IF`,
		`INSERT INTO "KV" ("Id", "V") VALUES (-1, $$x$$) USING TIMESTAMP -5`,
	} {
		f.Add(s, uint8(3))
	}
	lookup := testSchema()
	f.Fuzz(func(t *testing.T, cql string, n uint8) {
		values := make([]any, int(n%8))
		for i := range values {
			switch i % 4 {
			case 0:
				values[i] = i
			case 1:
				values[i] = "x"
			case 2:
				values[i] = nil
			default:
				values[i] = gocql.UnsetValue
			}
		}
		plan, err := planSettle("ks", retry.Statement{CQL: cql, Values: values}, lookup, 1)
		if err == nil {
			if plan.Table == "" || len(plan.Key) < plan.NPartition || plan.NPartition == 0 || len(plan.Regular)+len(plan.Static) == 0 {
				t.Fatalf("%q: incomplete plan %+v", cql, plan)
			}
		}
		lp, err := planLWT("ks", retry.Statement{CQL: cql, Values: values}, lookup)
		if err == nil && (lp.Table == "" || len(lp.Key) == 0) {
			t.Fatalf("%q: incomplete LWT plan %+v", cql, lp)
		}
	})
}
