package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
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
