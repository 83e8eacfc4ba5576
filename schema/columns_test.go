package schema_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

const columnsDDL = `
-- every kind, inline and clause primary keys
CREATE TABLE IF NOT EXISTS app.kinds (
  id uuid,
  c int,
  txt text,
  l list<int>,
  s set<text>,
  m map<text, int>,
  fl frozen<list<int>>,
  fs FROZEN <set<text>>,
  fm frozen<map<text, frozen<list<int>>>>,
  nested list<frozen<map<int, text>>>,
  tup tuple<int, text, frozen<list<int>>>,
  vec vector<float, 3>,
  addr address,
  qaddr app."Address",
  st set<int> static,
  "Mixed" list<text>,
  masked_col text MASKED WITH mask_default(),
  custom 'org.apache.cassandra.db.marshal.UTF8Type',
  PRIMARY KEY ((id), c)
) WITH CLUSTERING ORDER BY (c DESC);

CREATE TABLE app.views (page text PRIMARY KEY, n counter);
CREATE TYPE IF NOT EXISTS app.address (street text, tags frozen<set<text>>);

USE "Other";
CREATE TABLE t (k int PRIMARY KEY, v list<int>);
CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY, v set<int>); -- exists: kept as is
CREATE TABLE "Other"."T" (k int PRIMARY KEY, v map<int, int>);
`

func TestSchemaParseColumnsKinds(t *testing.T) {
	cols, err := schema.ParseColumns(columnsDDL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ks, table, col string
		want           retry.ColumnKind
	}{
		{"app", "kinds", "id", retry.ColumnScalar},
		{"app", "kinds", "c", retry.ColumnScalar},
		{"app", "kinds", "l", retry.ColumnList},
		{"app", "kinds", "s", retry.ColumnSet},
		{"app", "kinds", "m", retry.ColumnMap},
		{"app", "kinds", "fl", retry.ColumnScalar},
		{"app", "kinds", "fs", retry.ColumnScalar},
		{"app", "kinds", "fm", retry.ColumnScalar},
		{"app", "kinds", "nested", retry.ColumnList},
		{"app", "kinds", "tup", retry.ColumnScalar},
		{"app", "kinds", "vec", retry.ColumnScalar},
		{"app", "kinds", "addr", retry.ColumnScalar},
		{"app", "kinds", "qaddr", retry.ColumnScalar},
		{"app", "kinds", "st", retry.ColumnSet},
		{"app", "kinds", "Mixed", retry.ColumnList},
		{"app", "kinds", "mixed", retry.ColumnUnknown}, // quoted names are case-sensitive
		{"app", "kinds", "masked_col", retry.ColumnScalar},
		{"app", "kinds", "custom", retry.ColumnScalar},
		{"app", "kinds", "nope", retry.ColumnUnknown},
		{"app", "views", "n", retry.ColumnCounter},
		{"app", "address", "street", retry.ColumnUnknown}, // a type is not a table
		{"App", "kinds", "l", retry.ColumnUnknown},        // keyspace names are as stored
		{"other", "kinds", "l", retry.ColumnUnknown},
		{"", "kinds", "l", retry.ColumnList}, // no keyspace: the one table of that name
		{"Other", "t", "v", retry.ColumnList},
		{"Other", "T", "v", retry.ColumnMap},
		{"Other", "T", "k", retry.ColumnScalar},
		{"other", "t", "v", retry.ColumnUnknown}, // USE "Other" is case-sensitive
	} {
		if got := cols.ColumnKind(tc.ks, tc.table, tc.col); got != tc.want {
			t.Errorf("ColumnKind(%q, %q, %q) = %v, want %v", tc.ks, tc.table, tc.col, got, tc.want)
		}
	}
}

func TestSchemaParseColumnsKeyspaces(t *testing.T) {
	for _, tc := range []struct {
		name, ddl      string
		ks, table, col string
		want           retry.ColumnKind
	}{
		{"no keyspace answers any", `CREATE TABLE t (k int PRIMARY KEY, l list<int>)`, "app", "t", "l", retry.ColumnList},
		{"no keyspace answers none", `CREATE TABLE t (k int PRIMARY KEY, l list<int>)`, "", "t", "l", retry.ColumnList},
		{"named keyspace wins over none", `CREATE TABLE t (k int PRIMARY KEY, l list<int>); CREATE TABLE a.t (k int PRIMARY KEY, l set<int>)`, "a", "t", "l", retry.ColumnSet},
		{"none answers other keyspaces", `CREATE TABLE t (k int PRIMARY KEY, l list<int>); CREATE TABLE a.t (k int PRIMARY KEY, l set<int>)`, "b", "t", "l", retry.ColumnList},
		{"ambiguous without keyspace", `CREATE TABLE a.t (k int PRIMARY KEY, l list<int>); CREATE TABLE b.t (k int PRIMARY KEY, l set<int>)`, "", "t", "l", retry.ColumnUnknown},
		{"agreeing without keyspace", `CREATE TABLE a.t (k int PRIMARY KEY, l list<int>); CREATE TABLE b.t (k int PRIMARY KEY, l list<int>)`, "", "t", "l", retry.ColumnList},
		{"missing in one without keyspace", `CREATE TABLE a.t (k int PRIMARY KEY, l list<int>); CREATE TABLE b.t (k int PRIMARY KEY)`, "", "t", "l", retry.ColumnUnknown},
		{"other keyspace unknown", `CREATE TABLE a.t (k int PRIMARY KEY, l list<int>)`, "b", "t", "l", retry.ColumnUnknown},
		{"USE sets the keyspace", `USE a; CREATE TABLE t (k int PRIMARY KEY, l list<int>)`, "b", "t", "l", retry.ColumnUnknown},
		{"USE then explicit keyspace", `USE a; CREATE TABLE b.t (k int PRIMARY KEY, l list<int>)`, "b", "t", "l", retry.ColumnList},
		{"unquoted names lower-cased", `CREATE TABLE App.Tbl (K int PRIMARY KEY, Tags SET<text>)`, "app", "tbl", "tags", retry.ColumnSet},
		{"quoted names kept", `CREATE TABLE "App"."Tbl" ("K" int PRIMARY KEY, "Tags" SET<text>)`, "App", "Tbl", "Tags", retry.ColumnSet},
		{"columnfamily", `CREATE COLUMNFAMILY t (k int PRIMARY KEY, n counter)`, "", "t", "n", retry.ColumnCounter},
		{"alter add", `CREATE TABLE t (k int PRIMARY KEY); ALTER TABLE t ADD l list<int>`, "", "t", "l", retry.ColumnList},
		{"alter add several", `CREATE TABLE t (k int PRIMARY KEY); ALTER TABLE IF EXISTS t ADD IF NOT EXISTS (a int, m map<int, int>)`, "", "t", "m", retry.ColumnMap},
		{"alter add unparenthesised list", `CREATE TABLE t (k int PRIMARY KEY); ALTER TABLE t ADD a int, s set<int>`, "", "t", "s", retry.ColumnSet},
		{"alter add to unknown table", `ALTER TABLE a.t ADD l list<int>`, "a", "t", "l", retry.ColumnList},
		{"alter add if not exists keeps", `CREATE TABLE t (k int PRIMARY KEY, l list<int>); ALTER TABLE t ADD IF NOT EXISTS l set<int>`, "", "t", "l", retry.ColumnList},
		{"alter drop", `CREATE TABLE t (k int PRIMARY KEY, l list<int>); ALTER TABLE t DROP l`, "", "t", "l", retry.ColumnUnknown},
		{"alter drop several", `CREATE TABLE t (k int PRIMARY KEY, l list<int>, s set<int>); ALTER TABLE t DROP IF EXISTS (l, s) USING TIMESTAMP 5`, "", "t", "s", retry.ColumnUnknown},
		{"drop table", `CREATE TABLE a.t (k int PRIMARY KEY, l list<int>); DROP TABLE IF EXISTS a.t`, "a", "t", "l", retry.ColumnUnknown},
		{"drop table then create", `CREATE TABLE a.t (k int PRIMARY KEY, l list<int>); DROP TABLE a.t; CREATE TABLE a.t (k int PRIMARY KEY, l set<int>)`, "a", "t", "l", retry.ColumnSet},
		{"drop keyspace", `CREATE TABLE a.t (k int PRIMARY KEY, l list<int>); DROP KEYSPACE a`, "a", "t", "l", retry.ColumnUnknown},
		{"other statements skipped", `CREATE KEYSPACE IF NOT EXISTS a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
			CREATE INDEX ON a.t (v); INSERT INTO a.t (k) VALUES (1); CREATE TABLE a.t (k int PRIMARY KEY, v set<int>)`, "a", "t", "v", retry.ColumnSet},
		{"empty file", ``, "a", "t", "v", retry.ColumnUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := schema.ParseColumns(tc.ddl)
			if err != nil {
				t.Fatal(err)
			}
			if got := cols.ColumnKind(tc.ks, tc.table, tc.col); got != tc.want {
				t.Errorf("ColumnKind(%q, %q, %q) = %v, want %v", tc.ks, tc.table, tc.col, got, tc.want)
			}
		})
	}
}

func TestSchemaParseColumnsErrors(t *testing.T) {
	for _, tc := range []struct {
		ddl       string
		line, col int
		reason    string
	}{
		{"CREATE TABLE t (k int PRIMARY KEY, v text);\nSELECT 'open", 2, 8, "unterminated string"},
		{"CREATE TABLE t (k int PRIMARY KEY, v)", 1, 37, `column "v" has no type`},
		{"CREATE TABLE t (k int PRIMARY KEY, v list)", 1, 42, "list needs type parameters"},
		{"CREATE TABLE t (k int PRIMARY KEY, v frozen)", 1, 44, "frozen needs type parameters"},
		{"CREATE TABLE t (k int PRIMARY KEY, v map<int>)", 1, 38, "map takes 2 type parameter(s), has 1"},
		{"CREATE TABLE t (k int PRIMARY KEY, v list<int, int>)", 1, 38, "list takes 1"},
		{"CREATE TABLE t (k int PRIMARY KEY, v list<int)", 1, 46, "unclosed <"},
		{"CREATE TABLE t (k int PRIMARY KEY, v list<int>>)", 1, 47, `unexpected ">"`},
		{"CREATE TABLE t (k int PRIMARY KEY, v int<text>)", 1, 41, "takes no type parameters"},
		{"CREATE TABLE t (k int PRIMARY KEY, v list<counter>)", 1, 43, "counter cannot be nested"},
		{"CREATE TABLE t (k int PRIMARY KEY, v text", 1, 16, "unclosed ("},
		{"CREATE TABLE t k int PRIMARY KEY", 1, 16, "expected ("},
		{"CREATE TABLE (k int PRIMARY KEY)", 1, 14, "expected a table name"},
		{"CREATE TABLE ks. (k int PRIMARY KEY)", 1, 18, "expected a name after"},
		{"CREATE TABLE t ()", 1, 17, "empty definition"},
		{"CREATE TABLE t (, k int PRIMARY KEY)", 1, 17, "empty definition"},
		{"ALTER TABLE t ADD (v int,)", 1, 26, "empty definition"},
		{"\n\n  CREATE TABLE t (k int, v int)", 3, 3, "no PRIMARY KEY"},
		{"CREATE TABLE t (k int PRIMARY KEY, v int PRIMARY KEY)", 1, 42, "more than one PRIMARY KEY"},
		{"CREATE TABLE t (k int, PRIMARY KEY (k), PRIMARY KEY (k))", 1, 41, "more than one PRIMARY KEY"},
		{"CREATE TABLE t (k int, PRIMARY KEY ((k), x))", 1, 42, `undefined column "x"`},
		{"CREATE TABLE t (k int, PRIMARY KEY k)", 1, 36, "parenthesised column list"},
		{"CREATE TABLE t (k int, PRIMARY KEY (k,))", 1, 39, "incomplete PRIMARY KEY"},
		{"CREATE TABLE t (k int, PRIMARY KEY ((k), (c)))", 1, 42, `unexpected "("`},
		{"CREATE TABLE t (k int PRIMARY KEY, k text)", 1, 36, `column "k" defined twice`},
		{"CREATE TABLE t (k int PRIMARY KEY, v text extra)", 1, 43, `unexpected "extra"`},
		{"CREATE TABLE t (k int PRIMARY KEY) AND x", 1, 36, "WITH expected"},
		{"CREATE TABLE t (k int PRIMARY KEY, 7 int)", 1, 36, "expected a column name"},
		{"CREATE TABLE t (k int PRIMARY KEY);\nCREATE TABLE t (k int PRIMARY KEY)", 2, 1, "first on line 1"},
		{"CREATE TYPE a.addr (street text, street text)", 1, 34, `field "street" defined twice`},
		{"CREATE TYPE a.addr (street text static)", 1, 33, "unexpected"},
		{"CREATE TYPE a.addr (street text) WITH x", 1, 34, "after the fields"},
		{"USE", 1, 1, "USE needs exactly one keyspace name"},
		{"USE a b", 1, 1, "USE needs"},
		{"ALTER TABLE t", 1, 14, "needs ADD"},
		{"ALTER TABLE t ADD", 1, 18, "needs a column"},
		{"ALTER TABLE t ADD (a int) x", 1, 27, "after ALTER TABLE"},
		{"ALTER TABLE t ADD a int primary key", 1, 25, "unexpected"},
		{"ALTER TABLE t DROP", 1, 19, "needs a column"},
		{"DROP TABLE", 1, 11, "expected a table name"},
		{"DROP KEYSPACE IF EXISTS", 1, 24, "needs a keyspace name"},
		{"CREATE TABLE t (k int PRIMARY KEY, v " + strings.Repeat("list<", 40) + "int" + strings.Repeat(">", 40) + ")", 1, 1, "nested more than"},
	} {
		_, err := schema.ParseColumns(tc.ddl)
		var de *schema.DDLError
		if !errors.As(err, &de) || !errors.Is(err, schema.ErrBadDDL) {
			t.Errorf("%q: err = %v, want a *DDLError", tc.ddl, err)
			continue
		}
		if !strings.Contains(de.Reason, tc.reason) || de.Line != tc.line || (tc.col != 1 || tc.line != 1) && de.Column != tc.col {
			t.Errorf("%q: %v (line %d, column %d), want line %d, column %d, %q", tc.ddl, err, de.Line, de.Column, tc.line, tc.col, tc.reason)
		}
		if !strings.HasPrefix(err.Error(), "schema: line ") {
			t.Errorf("%q: message %q lacks the package prefix and position", tc.ddl, err)
		}
	}
	_, err := schema.ParseColumns("SELECT 'open")
	var le *cqltext.LexError
	if !errors.As(err, &le) {
		t.Errorf("lex error not unwrapped: %v", err)
	}
}

// TestParseColumnsTemplates: every shipped template parses, with the kinds it declares.
func TestSchemaParseColumnsTemplates(t *testing.T) {
	for _, tm := range schema.Templates() {
		cql, err := schema.Render(tm.Name, schema.Params{Keyspace: "app"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schema.ParseColumns(cql); err != nil {
			t.Errorf("%s: %v", tm.Name, err)
		}
	}
	cql, _ := schema.Render("eventlog", schema.Params{Keyspace: "app", Table: "orders"})
	cols, _ := schema.ParseColumns(cql)
	if k := cols.ColumnKind("app", "orders", "metadata"); k != retry.ColumnScalar {
		t.Errorf("eventlog metadata (frozen map): %v", k)
	}
	if k := cols.ColumnKind("app", "orders_buckets", "bucket"); k != retry.ColumnScalar {
		t.Errorf("eventlog buckets table: %v", k)
	}
}

// TestParseColumnsRefinesClassify: the verdicts the parsed kinds lead to.
func TestSchemaParseColumnsRefinesClassify(t *testing.T) {
	cols, err := schema.ParseColumns(`CREATE TABLE app.t (k int PRIMARY KEY, l list<int>, fl frozen<list<int>>, s set<int>, m map<text, int>, n int);
CREATE TABLE app.c (k int PRIMARY KEY, n counter);`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cql  string
		want bool // idempotent with the schema
	}{
		{"UPDATE app.t SET s = s + ? WHERE k = ?", true},
		{"UPDATE app.t SET m = m + ? WHERE k = ?", true},
		{"UPDATE app.t SET l = l + ? WHERE k = ?", false},
		{"UPDATE app.c SET n = n + ? WHERE k = ?", false},
		{"UPDATE app.t SET m[?] = ? WHERE k = ?", true},
		{"UPDATE app.t SET l[?] = ? WHERE k = ?", false},
		{"UPDATE app.t SET l = [1, 2] WHERE k = 1", false},
		{"UPDATE app.t SET fl = [1, 2] WHERE k = 1", true},
		{"INSERT INTO app.t (k, fl) VALUES (1, [1, 2])", true},
		{"INSERT INTO app.t (k, l) VALUES (1, [1, 2])", false},
		{"DELETE m[?] FROM app.t WHERE k = ?", true},
		{"DELETE l[?] FROM app.t WHERE k = ?", false},
	} {
		if got := retry.ClassifyWithSchema(tc.cql, cols).Idempotent; got != tc.want {
			t.Errorf("%s: idempotent %v with schema, want %v (%v)", tc.cql, got, tc.want, retry.ClassifyWithSchema(tc.cql, cols).Reasons)
		}
	}
	// Without the schema the set union and the map entry are judged conservatively.
	if retry.Classify("UPDATE app.t SET s = s + ? WHERE k = ?").Idempotent {
		t.Error("without schema s = s + ? should not be idempotent")
	}
}

func TestSchemaColumnsZeroValue(t *testing.T) {
	var c *schema.Columns
	if k := c.ColumnKind("a", "t", "c"); k != retry.ColumnUnknown {
		t.Errorf("nil Columns: %v", k)
	}
	if k := new(schema.Columns).ColumnKind("", "t", "c"); k != retry.ColumnUnknown {
		t.Errorf("zero Columns: %v", k)
	}
}

func FuzzParseColumns(f *testing.F) {
	f.Add(columnsDDL)
	for _, tm := range schema.Templates() {
		src, _ := schema.Source(tm.Name)
		f.Add(src)
	}
	f.Add("CREATE TABLE t (a int, PRIMARY KEY ((a")
	f.Add("CREATE TABLE t (a list<frozen<map<int,")
	f.Add("ALTER TABLE t ADD (")
	f.Add("CREATE TYPE x (a vector<float, 3>)")
	f.Fuzz(func(t *testing.T, s string) {
		cols, err := schema.ParseColumns(s)
		if err != nil {
			var de *schema.DDLError
			if !errors.As(err, &de) || de.Line < 1 || de.Column < 1 || de.Offset < 0 || de.Offset > len(s) {
				t.Fatalf("error without a position: %#v", err)
			}
			return
		}
		_ = cols.ColumnKind("", "t", "a")
		_ = cols.ColumnKind("ks", "t", "a")
	})
}

func ExampleParseColumns() {
	cols, err := schema.ParseColumns(`
		CREATE TABLE IF NOT EXISTS app.carts (id uuid PRIMARY KEY, items list<text>, tags set<text>);`)
	if err != nil {
		panic(err)
	}
	for _, cql := range []string{
		"UPDATE app.carts SET tags = tags + ? WHERE id = ?",
		"UPDATE app.carts SET items = ['a'] WHERE id = ?",
	} {
		v := retry.ClassifyWithSchema(cql, cols)
		fmt.Println(v.Idempotent, v.Reasons)
	}
	// Output:
	// true []
	// false [non-frozen list assignment "items = ['a']" (each repeat appends another copy)]
}

func TestColumnsTables(t *testing.T) {
	for ddl, want := range map[string]int{
		"":                                    0,
		"SELECT * FROM t;":                    0,
		"CREATE TABLE t (k int PRIMARY KEY);": 1,
		"CREATE TABLE a.t (k int PRIMARY KEY); CREATE TABLE b.t (k int PRIMARY KEY);": 2,
		"CREATE TABLE t (k int PRIMARY KEY); DROP TABLE t;":                           0,
	} {
		cols, err := schema.ParseColumns(ddl)
		if err != nil {
			t.Fatalf("%q: %v", ddl, err)
		}
		if got := cols.Tables(); got != want {
			t.Errorf("%q: Tables() = %d, want %d", ddl, got, want)
		}
	}
	if (*schema.Columns)(nil).Tables() != 0 {
		t.Error("nil Columns has tables")
	}
}

// TestSchemaParseColumnsTrailingComma: Cassandra's grammar takes an empty definition
// after the first in CREATE TABLE and CREATE TYPE ('(' def ( ',' def? )* ')'), and
// schemas in the wild (Cadence's) end a type with "last_field type,\n)".
func TestSchemaParseColumnsTrailingComma(t *testing.T) {
	cols, err := schema.ParseColumns("CREATE TYPE r (a bigint, b bigint,\n);\nCREATE TABLE t (k int PRIMARY KEY, l list<frozen<r>>,\n)")
	if err != nil {
		t.Fatal(err)
	}
	if k := cols.ColumnKind("", "t", "l"); k != retry.ColumnList {
		t.Errorf("kind of t.l = %v, want a list", k)
	}
}

// TestSchemaColumnsJSONLists: a schema file tells INSERT JSON's arrays apart — a set, a
// map or a frozen list is repeatable, a non-frozen list is not (lint --schema once called
// every array a list assignment).
func TestSchemaColumnsJSONLists(t *testing.T) {
	cols, err := schema.ParseColumns("CREATE TABLE ks.users (id text PRIMARY KEY, tags list<text>, ft frozen<list<text>>, names set<text>)")
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]bool{
		`{"id": "a", "ft": ["x"], "names": ["y"]}`: true,
		`{"id": "a", "tags": ["x"]}`:               false,
		`{"id": "a", "tags": []}`:                  true,
	} {
		v := retry.ClassifyWithSchema("INSERT INTO ks.users JSON '"+doc+"'", cols)
		if v.Idempotent != want {
			t.Errorf("%s: idempotent %v, want %v (%v)", doc, v.Idempotent, want, v.Reasons)
		}
	}
}
