package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

var (
	node *harness.Node
	bin  string // the built cqlsafe binary
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cqlsafe-cli")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "cqlsafe")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := harness.Main(m, &node)
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs the built binary and returns stdout, stderr and the exit code.
func cli(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLintExitCodes(t *testing.T) {
	good := writeFile(t, "good.cql", "CREATE TABLE IF NOT EXISTS t (id int PRIMARY KEY, v text);\nINSERT INTO t (id, v) VALUES (?, ?);\n")
	bad := writeFile(t, "bad.cql", "INSERT INTO t (id, v) VALUES (?, ?);\n\nUPDATE c SET n = n + 1 WHERE id = ?;\n")
	out, _, code := cli(t, "", "lint", good)
	if code != 0 || !strings.Contains(out, "good.cql:2: ok: INSERT INTO t") {
		t.Fatalf("good file: exit %d\n%s", code, out)
	}
	out, _, code = cli(t, "", "lint", good, bad)
	if code != 1 || !strings.Contains(out, "bad.cql:3: NOT IDEMPOTENT: UPDATE c SET n = n + 1") || !strings.Contains(out, `reason: counter update "n = n + 1"`) {
		t.Fatalf("bad file: exit %d\n%s", code, out)
	}
	out, _, code = cli(t, "SELECT * FROM t;", "lint", "-")
	if code != 0 || !strings.Contains(out, "<stdin>:1: ok") {
		t.Fatalf("stdin: exit %d\n%s", code, out)
	}
}

func TestLintJSON(t *testing.T) {
	bad := writeFile(t, "bad.cql", "CREATE TABLE IF NOT EXISTS v (page text PRIMARY KEY, n counter);\nINSERT INTO e (id) VALUES (uuid());\n")
	out, _, code := cli(t, "", "lint", "--json", bad)
	var got []struct {
		File       string   `json:"file"`
		Line       int      `json:"line"`
		Statement  string   `json:"statement"`
		Kind       string   `json:"kind"`
		Idempotent bool     `json:"idempotent"`
		Reasons    []string `json:"reasons"`
		Findings   []struct {
			Rule     string `json:"Rule"`
			Severity string `json:"Severity"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if code != 1 || len(got) != 2 || got[0].Kind != "schema" || got[0].Findings[0].Rule != "counter" ||
		got[1].Idempotent || got[1].Line != 2 || len(got[1].Reasons) == 0 {
		t.Fatalf("exit %d, %+v", code, got)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{}, {"nope"}, {"lint"}, {"lint", "/does/not/exist.cql"}, {"demo", "--rows", "0"}, {"demo", "--bogus"},
		{"schema"}, {"schema", "render"}, {"schema", "render", "eventlog"}, {"schema", "render", "nope", "--keyspace", "k"},
		{"schema", "render", "eventlog", "--keyspace", "bad-name"}, {"tombstone", "plan", "--keyspace", "k"},
		{"demo", "extra"},
	} {
		_, stderr, code := cli(t, "", args...)
		if code != 2 {
			t.Errorf("cqlsafe %v: exit %d, want 2 (%s)", args, code, stderr)
		}
		if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
			t.Errorf("cqlsafe %v printed a stack trace:\n%s", args, stderr)
		}
	}
	for _, args := range [][]string{{"help"}, {"demo", "--help"}, {"lint", "--help"}, {"schema", "--help"}, {"tombstone", "--help"}} {
		_, stderr, code := cli(t, "", args...)
		if code != 0 {
			t.Errorf("cqlsafe %v: exit %d (%s)", args, code, stderr)
		}
	}
}

func TestSchemaListRender(t *testing.T) {
	out, _, code := cli(t, "", "schema", "list")
	if code != 0 || !strings.Contains(out, "eventlog") || !strings.Contains(out, "tombstones") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	out, _, code = cli(t, "", "schema", "render", "eventlog", "--keyspace", "app", "--table", "orders", "--ttl", "720h")
	if code != 0 || !strings.Contains(out, `CREATE TABLE IF NOT EXISTS "app"."orders"`) || !strings.Contains(out, "default_time_to_live = 2592000") {
		t.Fatalf("render: %d\n%s", code, out)
	}
}

func TestDemoAgainstHosts(t *testing.T) {
	node.Require(t)
	out, stderr, code := cli(t, "", "demo", "--hosts", node.Hosts()[0], "--rows", "50", "--events", "500")
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"tombstone cells per read (50 rows", "counter = 1", "500 replayed in order", "restored name=Ada"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "read latency") {
		t.Errorf("demo still shows a read latency of unflushed rows, which says nothing:\n%s", out)
	}
	if !strings.Contains(stderr, "writing 50 rows") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
}

func TestTombstoneCommands(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE accounts (org text, id int, name text, PRIMARY KEY (org, id))`)
	if err := schema.ApplyTemplate(ctx, s, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`INSERT INTO accounts (org, id, name) VALUES ('acme', 1, 'Ada')`).Exec(); err != nil {
		t.Fatal(err)
	}
	tbl, _ := overwrite.Describe(ctx, s, ks, "accounts")
	st, err := tombstone.New(ctx, s, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, tbl, map[string]any{"org": "acme", "id": 1}, "bad-cmd"); err != nil {
		t.Fatal(err)
	}
	base := []string{"--hosts", node.Hosts()[0], "--keyspace", ks, "--table", "accounts", "--key", "org=acme,id=1"}
	out, _, code := cli(t, "", append([]string{"tombstone", "list"}, base...)...)
	if code != 0 || !strings.Contains(out, "bad-cmd") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	out, _, code = cli(t, "", append([]string{"tombstone", "plan", "--command", "other"}, base...)...)
	if code != 1 || !strings.Contains(out, "refused") {
		t.Fatalf("plan by another command: %d\n%s", code, out)
	}
	out, _, code = cli(t, "n\n", append([]string{"tombstone", "undelete", "--command", "bad-cmd"}, base...)...)
	if code != 1 || !strings.Contains(out, "not restored") {
		t.Fatalf("undelete answered no: %d\n%s", code, out)
	}
	out, _, code = cli(t, "", append([]string{"tombstone", "undelete", "--command", "bad-cmd", "--yes"}, base...)...)
	if code != 0 || !strings.Contains(out, "restored") || !strings.Contains(out, "name=Ada") {
		t.Fatalf("undelete --yes: %d\n%s", code, out)
	}
	var name string
	if err := s.Query(`SELECT name FROM accounts WHERE org = 'acme' AND id = 1`).Scan(&name); err != nil || name != "Ada" {
		t.Fatalf("row after undelete: %q %v", name, err)
	}
}

// lintDDL and lintQueries are the column types and statements of the lint --schema and
// --hosts tests; want[i] is whether statement i+1 is repeatable without types and with.
const lintDDL = `CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY, l list<int>, fl frozen<list<int>>, s set<int>, m map<text, int>, v int);
CREATE TABLE IF NOT EXISTS c (k int PRIMARY KEY, n counter);
`

var lintQueries = []struct {
	stmt               string
	untyped, withTypes bool
}{
	{"UPDATE t SET s = s + ? WHERE k = ?", false, true},
	{"UPDATE t SET m = m + ? WHERE k = ?", false, true},
	{"UPDATE t SET m[?] = ? WHERE k = ?", false, true},
	{"UPDATE t SET l = l - ? WHERE k = ?", false, false}, // removal races another writer's add
	{"UPDATE t SET fl = [1, 2] WHERE k = ?", false, true},
	{"UPDATE t SET l = ? WHERE k = ?", true, false},
	{"INSERT INTO t (k, l) VALUES (?, ?)", true, false},
	{"UPDATE t SET fl = ?, v = ?, s = ?, m = ? WHERE k = ?", true, true},
	{"UPDATE t SET l = [] WHERE k = ?", true, true},
	{"UPDATE t SET l = [1, 2] WHERE k = ?", false, false},
	{"UPDATE t SET l = l + ? WHERE k = ?", false, false},
	{"UPDATE t SET l[?] = ? WHERE k = ?", false, false},
	{"DELETE l[?] FROM t WHERE k = ?", false, false},
	{"UPDATE c SET n = n + ? WHERE k = ?", false, false},
}

// lintVerdicts runs lint on the queries file and returns, per statement, whether it
// was reported repeatable ("ok"), and the exit code.
func lintVerdicts(t *testing.T, queries string, args ...string) ([]bool, string, int) {
	t.Helper()
	out, stderr, code := cli(t, "", append(append([]string{"lint"}, args...), queries)...)
	var got []bool
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, ".cql:") && strings.Contains(line, ": ok: "):
			got = append(got, true)
		case strings.Contains(line, ": NOT IDEMPOTENT: "):
			got = append(got, false)
		}
	}
	if len(got) != len(lintQueries) {
		t.Fatalf("lint %v: %d verdicts for %d statements (exit %d)\n%s%s", args, len(got), len(lintQueries), code, out, stderr)
	}
	return got, out, code
}

func lintQueriesFile(t *testing.T) string {
	var b strings.Builder
	for _, q := range lintQueries {
		b.WriteString(q.stmt + ";\n")
	}
	return writeFile(t, "queries.cql", b.String())
}

func TestLintSchemaFile(t *testing.T) {
	ddl := writeFile(t, "schema.cql", lintDDL)
	queries := lintQueriesFile(t)
	untyped, _, _ := lintVerdicts(t, queries)
	typed, out, code := lintVerdicts(t, queries, "--schema", ddl)
	for i, q := range lintQueries {
		if untyped[i] != q.untyped {
			t.Errorf("without --schema %s: ok = %v, want %v", q.stmt, untyped[i], q.untyped)
		}
		if typed[i] != q.withTypes {
			t.Errorf("with --schema %s: ok = %v, want %v", q.stmt, typed[i], q.withTypes)
		}
	}
	if code != 1 || !strings.Contains(out, `queries.cql:6:   reason: non-frozen list "l" assigned whole from bind marker 1`) {
		t.Errorf("exit %d\n%s", code, out)
	}

	// The exit code follows: a set union is a finding without types and clean with them;
	// a marker bound to a non-frozen list the other way round.
	union := writeFile(t, "union.cql", "UPDATE t SET s = s + ? WHERE k = ?;\n")
	if _, _, code := cli(t, "", "lint", union); code != 1 {
		t.Errorf("s = s + ? without --schema: exit %d, want 1", code)
	}
	if out, _, code := cli(t, "", "lint", "--schema", ddl, union); code != 0 {
		t.Errorf("s = s + ? with --schema: exit %d, want 0\n%s", code, out)
	}
	list := writeFile(t, "list.cql", "UPDATE t SET l = ? WHERE k = ?;\n")
	if _, _, code := cli(t, "", "lint", list); code != 0 {
		t.Errorf("l = ? without --schema: exit %d, want 0", code)
	}
	if out, _, code := cli(t, "", "lint", "--schema", ddl, list); code != 1 || !strings.Contains(out, "NOT IDEMPOTENT") {
		t.Errorf("l = ? with --schema: exit %d, want 1\n%s", code, out)
	}

	// Keyspaces: a table of the schema file without keyspace matches any; --keyspace and
	// USE say where statements without one run.
	ks := writeFile(t, "ks.cql", "CREATE TABLE app.t (k int PRIMARY KEY, l list<int>);\nCREATE TABLE other.t (k int PRIMARY KEY, l set<int>);\n")
	for _, tc := range []struct {
		queries string
		args    []string
		code    int
	}{
		{"UPDATE app.t SET l = ? WHERE k = ?;", nil, 1},
		{"UPDATE other.t SET l = ? WHERE k = ?;", nil, 0},
		{"UPDATE t SET l = l + ? WHERE k = ?;", []string{"--keyspace", "other"}, 0},
		{"UPDATE t SET l = l + ? WHERE k = ?;", []string{"--keyspace", "app"}, 1},
		{"USE other; UPDATE t SET l = l + ? WHERE k = ?;", []string{"--keyspace", "app"}, 0},
		{"UPDATE t SET l = l + ? WHERE k = ?;", nil, 1}, // two tables t disagree: conservative
	} {
		q := writeFile(t, "q.cql", tc.queries)
		out, _, code := cli(t, "", append(append([]string{"lint", "--schema", ks}, tc.args...), q)...)
		if code != tc.code {
			t.Errorf("%s %v: exit %d, want %d\n%s", tc.queries, tc.args, code, tc.code, out)
		}
	}

	// A marker whose column the types do not know is a note, in text and JSON.
	unknown := writeFile(t, "unknown.cql", "UPDATE nope SET l = ? WHERE k = ?;\n")
	out, _, code = cli(t, "", "lint", "--schema", ddl, unknown)
	if code != 0 || !strings.Contains(out, `unknown.cql:1:   note: bind marker 1: a non-empty list bound to "l"`) {
		t.Errorf("unknown table: exit %d\n%s", code, out)
	}
	out, _, _ = cli(t, "", "lint", "--json", "--schema", ddl, unknown)
	var js []struct {
		Conditions []string `json:"conditions"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || len(js) != 1 || len(js[0].Conditions) != 1 {
		t.Errorf("--json conditions: %v\n%s", err, out)
	}
}

func TestLintSchemaErrors(t *testing.T) {
	q := writeFile(t, "q.cql", "UPDATE t SET l = ? WHERE k = ?;\n")
	bad := writeFile(t, "bad.cql", "CREATE TABLE t (k int PRIMARY KEY,\n  l list);\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--schema", bad, q}, "bad.cql:2:9: list needs type parameters"},
		{[]string{"--schema", "/does/not/exist.cql", q}, "no such file"},
		{[]string{"--schema", bad, "--hosts", "127.0.0.1:1", q}, "not both"},
		{[]string{"--hosts", "127.0.0.1:1", "--timeout", "2s", q}, "connect to 127.0.0.1:1"}, // nothing listens on port 1
		{[]string{"--hosts", "", q}, "--hosts is required"},
	} {
		out, stderr, code := cli(t, "", append([]string{"lint"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || out != "" {
			t.Errorf("lint %v: exit %d, want 2 and %q\nstdout: %s\nstderr: %s", tc.args, code, tc.want, out, stderr)
		}
	}
	// lint never reads the environment's cluster on its own.
	cmd := exec.Command(bin, "lint", q)
	cmd.Env = append(os.Environ(), harness.EnvHosts+"=127.0.0.1:1")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "q.cql:1: ok") {
		t.Errorf("lint with %s set: %v\n%s", harness.EnvHosts, err, out)
	}
	if out, _, code := cli(t, "", "lint", "--help"); code != 0 || out != "" {
		t.Errorf("lint --help: exit %d", code) // help goes to stderr
	}
}

// TestLintAgainstHosts: --hosts reads the same column types from a cluster as --schema
// from the file, and the verdicts match what Cassandra does with a repeat.
func TestLintAgainstHosts(t *testing.T) {
	s, ks := node.Keyspace(t)
	for _, st := range strings.Split(strings.TrimSpace(lintDDL), ";") {
		if st = strings.TrimSpace(st); st != "" {
			harness.Exec(t, s, st)
		}
	}
	queries := lintQueriesFile(t)
	typed, _, _ := lintVerdicts(t, queries, "--schema", writeFile(t, "schema.cql", lintDDL))
	fromCluster, out, code := lintVerdicts(t, queries, "--hosts", node.Hosts()[0], "--keyspace", ks)
	for i, q := range lintQueries {
		if fromCluster[i] != q.withTypes || fromCluster[i] != typed[i] {
			t.Errorf("--hosts %s: ok = %v, want %v (as --schema: %v)", q.stmt, fromCluster[i], q.withTypes, typed[i])
		}
	}
	if code != 1 {
		t.Errorf("exit %d\n%s", code, out)
	}
	// Statements in another keyspace than --keyspace are judged by that keyspace's tables.
	qual := writeFile(t, "qual.cql", "UPDATE "+ks+".t SET s = s + ? WHERE k = ?;\n")
	if out, _, code := cli(t, "", "lint", "--hosts", node.Hosts()[0], qual); code != 0 {
		t.Errorf("qualified set union: exit %d\n%s", code, out)
	}

	// Cassandra's judgement of the same statements, each executed twice with one pinned
	// timestamp: what lint reports repeatable leaves the row as once, what it reports not
	// repeatable does not.
	for i, tc := range []struct {
		stmt   string
		values []any
		want   map[string]string // columns of the row after two executions
	}{
		{"UPDATE t USING TIMESTAMP 1000 SET s = s + ? WHERE k = ?", []any{[]int{1, 2}}, map[string]string{"s": "[1 2]"}},
		{"UPDATE t USING TIMESTAMP 1000 SET m[?] = ? WHERE k = ?", []any{"a", 1}, map[string]string{"m": "map[a:1]"}},
		{"UPDATE t USING TIMESTAMP 1000 SET fl = ?, v = ? WHERE k = ?", []any{[]int{1, 2}, 7}, map[string]string{"fl": "[1 2]", "v": "7"}},
		{"UPDATE t USING TIMESTAMP 1000 SET l = ? WHERE k = ?", []any{[]int{1, 2}}, map[string]string{"l": "[1 2 1 2]"}},
	} {
		k := 100 + i
		for range 2 {
			if err := s.Query(tc.stmt, append(tc.values, k)...).Exec(); err != nil {
				t.Fatal(err)
			}
		}
		var l, fl []int
		var st []int
		var m map[string]int
		var v int
		if err := s.Query(`SELECT l, fl, s, m, v FROM t WHERE k = ?`, k).Scan(&l, &fl, &st, &m, &v); err != nil {
			t.Fatal(err)
		}
		row := map[string]string{"l": fmt.Sprint(l), "fl": fmt.Sprint(fl), "s": fmt.Sprint(st), "m": fmt.Sprint(m), "v": fmt.Sprint(v)}
		for col, val := range tc.want {
			if row[col] != val {
				t.Errorf("%s twice: %s = %s, want %s", tc.stmt, col, row[col], val)
			}
		}
	}
}

// TestLintSchemaMatchesCluster: the column kinds schema.ParseColumns reads from
// Cassandra's own DESCRIBE output are the kinds retry.SessionSchema reads from the same
// cluster's metadata, for every column of a table over the collection, frozen, tuple,
// vector, UDT, static and counter types.
func TestLintSchemaMatchesCluster(t *testing.T) {
	s, ks := node.Keyspace(t)
	harness.Exec(t, s,
		`CREATE TYPE addr (street text, tags frozen<set<text>>)`,
		`CREATE TABLE "Mixed" ("Id" int, c timeuuid, l list<int>, s set<text>, m map<text, frozen<list<int>>>,
			fl frozen<list<int>>, fs frozen<set<int>>, fm frozen<map<int, text>>, tup tuple<int, frozen<list<int>>>,
			vec vector<float, 3>, a addr, fa frozen<addr>, st list<text> static, "Up" set<int>,
			PRIMARY KEY (("Id"), c)) WITH CLUSTERING ORDER BY (c DESC)`,
		`CREATE TABLE views (page text PRIMARY KEY, n counter)`,
		`ALTER TABLE views ADD IF NOT EXISTS (extra counter)`)
	var ddl strings.Builder
	iter := s.Query(`DESCRIBE KEYSPACE ` + ks).Iter()
	var typ, name, stmt, kname string
	for iter.Scan(&kname, &typ, &name, &stmt) {
		ddl.WriteString(stmt + "\n")
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	cols, err := schema.ParseColumns(ddl.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, ddl.String())
	}
	km, err := s.KeyspaceMetadata(ks)
	if err != nil {
		t.Fatal(err)
	}
	live := retry.SessionSchema(s)
	n := 0
	for table, tm := range km.Tables {
		for col := range tm.Columns {
			n++
			want := live.ColumnKind(ks, table, col)
			if got := cols.ColumnKind(ks, table, col); got != want || want == retry.ColumnUnknown {
				t.Errorf("%s.%s: parsed %v, cluster %v", table, col, got, want)
			}
		}
	}
	if n < 17 {
		t.Fatalf("only %d columns compared\n%s", n, ddl.String())
	}
}

// TestLintRefusesBrokenCQL: what Cassandra's grammar refuses is exit 2 with the
// position of the error, never a verdict; with --hosts a table the cluster does not
// have is an error too.
func TestLintRefusesBrokenCQL(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"INSERT INTO t (id, v) VALUES (?, ?);\nINSERT INTO t (id v VALUES (1,\n", `:2:19: syntax error: expected ")"`},
		{"UPDATE SET WHERE;\n", ":1:8: syntax error: expected a table name"},
		{"SELEC * FORM x;\n", "is not CQL"},
		{"SELECT * FROM t;\nSELEC * FORM x;\n", ":2:1: syntax error: expected a statement"},
		{"INSERT INTO t (a, b) VALUES (1);\n", "2 columns but 1 values"},
	} {
		out, errOut, code := cli(t, c.text, "lint", "-")
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Contains(out, ": ok: ") {
			t.Errorf("lint %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.text, code, out, errOut, c.want)
		}
	}
	s, ks := node.Keyspace(t)
	harness.Exec(t, s, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	q := writeFile(t, "q.cql", "INSERT INTO kv (id, v) VALUES (?, ?);\nSELECT v FROM nosuch WHERE id = ?;\n")
	_, errOut, code := cli(t, "", "lint", "--hosts", node.Hosts()[0], "--keyspace", ks, q)
	if code != 2 || !strings.Contains(errOut, "q.cql:2: table "+ks+".nosuch does not exist") {
		t.Errorf("lint --hosts with an unknown table: exit %d, %q", code, errOut)
	}
	ok := writeFile(t, "ok.cql", "INSERT INTO kv (id, v) VALUES (?, ?);\nBEGIN BATCH UPDATE kv SET v = 'x' WHERE id = 1; APPLY BATCH;\n")
	if out, errOut, code := cli(t, "", "lint", "--hosts", node.Hosts()[0], "--keyspace", ks, ok); code != 0 {
		t.Errorf("lint --hosts of statements on an existing table: exit %d\n%s%s", code, out, errOut)
	}
}
