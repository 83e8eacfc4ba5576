package settle

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"

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
	native := func(t gocql.Type) gocql.TypeInfo { return gocql.NewNativeType(4, t, "") }
	coll := func(t gocql.Type, key, elem gocql.TypeInfo) gocql.TypeInfo {
		return gocql.CollectionType{NativeType: gocql.NewNativeType(4, t, ""), Key: key, Elem: elem}
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
			cm := &gocql.ColumnMetadata{Keyspace: ks, Table: name, Name: c.name, Kind: c.kind, Type: c.typ, Validator: c.validator}
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
		{name: "insert, uuid and blob literals", cql: `INSERT INTO u (id, b, ok) VALUES (550e8400-e29b-41d4-a716-446655440000, 0xCAFE, true)`, regular: []string{"b", "ok"}, key: []any{lit}, table: "ks.u"},
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
			if got := plan.keyspace + "." + plan.table; got != table {
				t.Errorf("table %s, want %s", got, table)
			}
			if !slices.Equal(plan.regular, tc.regular) || !slices.Equal(plan.static, tc.static) {
				t.Errorf("regular %v static %v, want %v %v", plan.regular, plan.static, tc.regular, tc.static)
			}
			var key []any
			for _, k := range plan.key {
				key = append(key, k.value)
			}
			if !reflect.DeepEqual(key, tc.key) {
				t.Errorf("key %#v, want %#v", key, tc.key)
			}
			want := tc.ts
			if want == 0 {
				want = pinned
			}
			if plan.timestamp != want {
				t.Errorf("timestamp %d, want %d", plan.timestamp, want)
			}
			if len(plan.skipped) != tc.skipped {
				t.Errorf("skipped %q, want %d", plan.skipped, tc.skipped)
			}
		})
	}
}

func TestSettleJudgeWriteTimes(t *testing.T) {
	for _, tc := range []struct {
		times []int64
		want  Outcome
	}{
		{nil, NotVisible},
		{[]int64{999}, NotVisible},
		{[]int64{1000}, Landed},
		{[]int64{1001}, Superseded},
		{[]int64{1001, 1000}, Landed}, // one column overwritten by a newer write, the other still ours
		{[]int64{999, 1001}, Superseded},
	} {
		if got := judgeWriteTimes(1000, tc.times); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.times, got, tc.want)
		}
	}
}

func TestSettleAggregate(t *testing.T) {
	lookup := testSchema()
	plan := func(cql string, values ...any) settlePlan {
		p, _ := planSettle("ks", retry.Statement{CQL: cql, Values: values}, lookup, 1)
		return p
	}
	del1 := plan(`DELETE FROM kv USING TIMESTAMP ? WHERE id = ?`, int64(1), 1)
	ins1 := plan(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "x")
	ins2 := plan(`INSERT INTO kv (id, v) VALUES (?, ?)`, 2, "x")
	st := func(os ...Outcome) []StatementResult {
		out := make([]StatementResult, len(os))
		for i, o := range os {
			out[i].Outcome = o
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		sts    []StatementResult
		plans  []settlePlan
		logged bool
		want   Outcome
	}{
		{"one statement", st(Landed), []settlePlan{ins1}, false, Landed},
		{"overwrite batch: delete + insert, one partition", st(Unsettleable, Landed), []settlePlan{del1, ins1}, false, Landed},
		{"overwrite batch not visible", st(Unsettleable, NotVisible), []settlePlan{del1, ins1}, false, NotVisible},
		{"unlogged, two partitions, one landed", st(Landed, NotVisible), []settlePlan{ins1, ins2}, false, Mixed},
		{"unlogged, two partitions, both landed", st(Landed, Landed), []settlePlan{ins1, ins2}, false, Landed},
		{"unlogged, two partitions, one unsettleable", st(Unsettleable, Landed), []settlePlan{del1, ins2}, false, Mixed},
		{"logged: one landed is all", st(Landed, NotVisible), []settlePlan{ins1, ins2}, true, Landed},
		{"logged: superseded and not visible", st(Superseded, NotVisible), []settlePlan{ins1, ins2}, true, Mixed},
		{"nothing settleable", st(Unsettleable, Unsettleable), []settlePlan{del1, del1}, false, Unsettleable},
	} {
		if got := aggregate(tc.sts, tc.plans, tc.logged); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSettlePlanLWT(t *testing.T) {
	lookup := testSchema()
	for _, tc := range []struct {
		name      string
		cql       string
		values    []any
		rowDelete bool
		mustExist bool
		expect    []string
		changed   bool
		err       string
	}{
		{name: "insert if not exists", cql: `INSERT INTO kv (id, v, w) VALUES (?, ?, ?) IF NOT EXISTS`, values: []any{1, "x", gocql.UnsetValue}, mustExist: true, expect: []string{"v"}, changed: true},
		{name: "update, condition on the set column to another value", cql: `UPDATE kv SET v = ? WHERE id = ? IF v = ?`, values: []any{"new", 1, "old"}, expect: []string{"v"}, changed: true},
		{name: "update, condition to the same value", cql: `UPDATE kv SET v = ? WHERE id = ? IF v = ?`, values: []any{"same", 1, "same"}, expect: []string{"v"}},
		{name: "update, condition on another column", cql: `UPDATE kv SET v = 'x' WHERE id = 1 IF w = 5`, expect: []string{"v"}},
		{name: "update, != the new value", cql: `UPDATE kv SET w = ? WHERE id = ? IF w != ?`, values: []any{3, 1, 3}, expect: []string{"w"}, changed: true},
		{name: "update if exists", cql: `UPDATE kv SET v = ? WHERE id = ? IF EXISTS`, values: []any{"x", 1}, expect: []string{"v"}},
		{name: "update, condition null, set a value", cql: `UPDATE kv SET v = ? WHERE id = ? IF v = null`, values: []any{"x", 1}, expect: []string{"v"}, changed: true},
		{name: "delete if exists", cql: `DELETE FROM kv WHERE id = ? IF EXISTS`, values: []any{1}, rowDelete: true, changed: true},
		{name: "delete if value", cql: `DELETE FROM kv WHERE id = ? IF w = ?`, values: []any{1, 4}, rowDelete: true, changed: true},
		{name: "delete if null", cql: `DELETE FROM kv WHERE id = ? IF w = ?`, values: []any{1, nil}, rowDelete: true},
		{name: "delete column if exists", cql: `DELETE v FROM kv WHERE id = ? IF EXISTS`, values: []any{1}, expect: []string{"v"}},
		{name: "delete column if it has a value", cql: `DELETE v FROM kv WHERE id = ? IF v = 'a'`, values: []any{1}, expect: []string{"v"}, changed: true},

		{name: "not conditional", cql: `INSERT INTO kv (id, v) VALUES (?, ?)`, values: []any{1, "x"}, err: "not a conditional write"},
		{name: "list append", cql: `UPDATE t SET l = l + ? WHERE k = ? AND c = ? IF EXISTS`, values: []any{[]int{1}, 1, "a"}, err: "not a whole-column value"},
		{name: "element delete", cql: `DELETE m['a'] FROM t WHERE k = ? AND c = ? IF EXISTS`, values: []any{1, "a"}, err: "element delete"},
		{name: "partition-level condition", cql: `UPDATE t SET s = ? WHERE k = ? IF s = ?`, values: []any{1, 1, 2}, err: "primary key column c"},
		{name: "json", cql: `INSERT INTO kv JSON ? IF NOT EXISTS`, values: []any{`{"id":1}`}, err: "INSERT JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := planLWT("ks", retry.Statement{CQL: tc.cql, Values: tc.values}, lookup)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for _, e := range plan.expect {
				cols = append(cols, e.column)
			}
			if plan.rowDelete != tc.rowDelete || plan.mustExist != tc.mustExist || !slices.Equal(cols, tc.expect) || plan.changed != tc.changed {
				t.Errorf("rowDelete %v mustExist %v expect %v changed %v, want %v %v %v %v",
					plan.rowDelete, plan.mustExist, cols, plan.changed, tc.rowDelete, tc.mustExist, tc.expect, tc.changed)
			}
		})
	}
}

func TestSettleJudgeLWT(t *testing.T) {
	textT := gocql.NewNativeType(4, gocql.TypeVarchar, "")
	setT := gocql.CollectionType{NativeType: gocql.NewNativeType(4, gocql.TypeSet, ""), Elem: gocql.NewNativeType(4, gocql.TypeInt, "")}
	udtT := gocql.UDTTypeInfo{NativeType: gocql.NewNativeType(4, gocql.TypeUDT, "")}
	cell := func(typ gocql.TypeInfo, v any) rawCell {
		b, err := gocql.Marshal(typ, v)
		if err != nil {
			t.Fatal(err)
		}
		return rawCell{info: typ, data: b}
	}
	// Cassandra returns a set in its own order; [3 1 2] is bound, the read says [1 2 3].
	sorted := rawCell{info: setT, data: []byte{0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 3}}
	insert := lwtPlan{mustExist: true, changed: true, expect: []expectation{{column: "v", value: "x"}}}
	for _, tc := range []struct {
		name   string
		plan   lwtPlan
		row    []rawCell
		exists bool
		want   LWTOutcome
	}{
		{"insert, row holds its values", insert, []rawCell{cell(textT, "x")}, true, LWTApplied},
		{"insert, row holds other values", insert, []rawCell{cell(textT, "y")}, true, LWTNotApplied},
		{"insert, no row", insert, nil, false, LWTNotApplied},
		{"insert, empty string is not null", insert, []rawCell{{info: textT, data: []byte{}}}, true, LWTNotApplied},
		{"insert of key columns only", lwtPlan{mustExist: true, changed: true}, []rawCell{cell(textT, "k")}, true, LWTUnknown},
		{"update to the same value", lwtPlan{expect: []expectation{{column: "v", value: "x"}}}, []rawCell{cell(textT, "x")}, true, LWTUnknown},
		{"update, bound null, column null", lwtPlan{changed: true, expect: []expectation{{column: "v"}}}, []rawCell{{info: textT}}, true, LWTApplied},
		{"set in another order", lwtPlan{changed: true, expect: []expectation{{column: "st", value: []int{3, 1, 2}, multi: true}}}, []rawCell{sorted}, true, LWTApplied},
		{"empty non-frozen set reads as null", lwtPlan{changed: true, expect: []expectation{{column: "st", value: []int{}, multi: true}}}, []rawCell{{info: setT}}, true, LWTApplied},
		{"a UDT that differs as bytes", lwtPlan{changed: true, expect: []expectation{{column: "u", value: []byte{1}}}}, []rawCell{{info: udtT, data: []byte{2}}}, true, LWTUnknown},
		{"row delete, row gone", lwtPlan{rowDelete: true, changed: true}, nil, false, LWTApplied},
		{"row delete, row there", lwtPlan{rowDelete: true, changed: true}, []rawCell{cell(textT, "k")}, true, LWTNotApplied},
		{"row delete without a condition that needs the row", lwtPlan{rowDelete: true}, nil, false, LWTUnknown},
	} {
		got := judgeLWT(tc.plan, tc.row, tc.exists)
		if got.Outcome != tc.want || got.Why == "" {
			t.Errorf("%s: %v (%s), want %v", tc.name, got.Outcome, got.Why, tc.want)
		}
	}
}

func TestSettleErrors(t *testing.T) {
	if _, err := Write(context.TODO(), nil, &retry.OutcomeUnknownError{}); err == nil {
		t.Error("nil session: no error")
	}
	if _, err := LWT(context.TODO(), nil, retry.Statement{}); err == nil {
		t.Error("nil session: no error")
	}
	var err error = &UnsettleableError{Statement: 1, CQL: "DELETE FROM kv WHERE id = ?", Reason: "DELETE leaves tombstones"}
	if !errors.Is(err, ErrUnsettleable) || !strings.HasPrefix(err.Error(), "settle: cannot settle statement 2") {
		t.Errorf("%v", err)
	}
	if Landed.String() != "landed" || Outcome(99).String() != "unknown" || LWTNotApplied.String() != "not_applied" {
		t.Error("names")
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
			if plan.table == "" || len(plan.key) < plan.nPartition || plan.nPartition == 0 || len(plan.regular)+len(plan.static) == 0 {
				t.Fatalf("%q: incomplete plan %+v", cql, plan)
			}
		}
		lp, err := planLWT("ks", retry.Statement{CQL: cql, Values: values}, lookup)
		if err == nil && (lp.table == "" || len(lp.key) == 0) {
			t.Fatalf("%q: incomplete LWT plan %+v", cql, lp)
		}
	})
}
