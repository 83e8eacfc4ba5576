package main

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/schema"
)

// TestBadInputOneLine gives every command that connects input it must reject: each
// prints one line, exits non-zero and writes nothing (the keyspace holds the same
// tables afterwards, and no keyspace appears).
func TestBadInputOneLine(t *testing.T) {
	s, ks := node.Keyspace(t)
	harness.Exec(t, s, `CREATE TABLE accounts (org text, id int, name text, PRIMARY KEY (org, id))`)
	hosts := node.Hosts()[0]
	notCQL := writeFile(t, "notes.txt", "remember to buy milk\n")
	noTables := writeFile(t, "select.cql", "SELECT * FROM t;\n")
	good := writeFile(t, "good.cql", "INSERT INTO accounts (org, id) VALUES (?, ?);\n")
	row := []string{"--hosts", hosts, "--keyspace", ks, "--table", "accounts"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"wrong keyspace", []string{"tombstone", "list", "--hosts", hosts, "--keyspace", "no_such_ks", "--table", "accounts", "--key", "org=a,id=1"}, 1, `no such keyspace: "no_such_ks"`},
		{"missing table", []string{"tombstone", "list", "--hosts", hosts, "--keyspace", ks, "--table", "nope", "--key", "id=1"}, 1, "(check --table"},
		{"key lacks a column", append([]string{"tombstone", "plan", "--command", "c", "--key", "org=a"}, row...), 2, "id"},
		{"key value of the wrong type", append([]string{"tombstone", "undelete", "--command", "c", "--yes", "--key", "org=a,id=one"}, row...), 2, "id"},
		{"key not col=value", append([]string{"tombstone", "list", "--key", "org"}, row...), 2, "org"},
		{"key column twice", append([]string{"tombstone", "list", "--key", "org=a,id=1,org=b"}, row...), 2, "given twice"},
		{"unreadable password file", append([]string{"tombstone", "list", "--key", "org=a,id=1", "--username", "u", "--password-file", "/no/such/file"}, row...), 1, "--password-file"},
		{"missing TLS CA", append([]string{"tombstone", "list", "--key", "org=a,id=1", "--tls-ca", "/no/such/ca.pem"}, row...), 1, "--tls-ca"},
		{"missing TLS cert", append([]string{"tombstone", "list", "--key", "org=a,id=1", "--tls-cert", "/no/such/c.pem", "--tls-key", "/no/such/k.pem"}, row...), 1, "--tls-cert"},
		{"migrate: missing tables", []string{"migrate", "check", "--hosts", hosts, "--keyspace", ks, "--old", "nope", "--new", "nope2"}, 1, "no table " + ks + ".nope (check --old"},
		{"migrate backfill: missing tables", []string{"migrate", "backfill", "--hosts", hosts, "--keyspace", ks, "--old", "nope", "--new", "nope2"}, 1, "(check --old"},
		{"migrate: wrong keyspace", []string{"migrate", "status", "--hosts", hosts, "--keyspace", "no_such_ks", "--old", "a", "--new", "b"}, 1, "no such keyspace"},
		{"schema apply: unknown template", []string{"schema", "apply", "nope", "--hosts", hosts, "--keyspace", ks}, 2, "unknown template"},
		{"schema apply: table before its keyspace", []string{"schema", "apply", "eventlog", "--hosts", hosts, "--keyspace", "no_such_ks"}, 1, "create it first: cqlsafe schema apply keyspace --keyspace no_such_ks"},
		{"lint: wrong keyspace", []string{"lint", "--hosts", hosts, "--keyspace", "no_such_ks", good}, 2, "no such keyspace"},
		{"lint: not CQL", []string{"lint", notCQL}, 2, "is not CQL"},
		{"lint: --schema without tables", []string{"lint", "--schema", noTables, good}, 2, "no CREATE TABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := cli(t, "", tc.args...)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if code != tc.code || len(lines) != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("cqlsafe %s: exit %d (want %d), stderr (want one line with %q):\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, stderr)
			}
			t.Logf("%s", strings.TrimSpace(stderr))
		})
	}
	var tables []string
	iter := s.Query(`SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?`, ks).Iter()
	var name string
	for iter.Scan(&name) {
		tables = append(tables, name)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(tables)
	if strings.Join(tables, ",") != "accounts" {
		t.Errorf("tables in %s after rejected commands: %v, want only accounts", ks, tables)
	}
	var n int
	if err := s.Query(`SELECT COUNT(*) FROM system_schema.keyspaces WHERE keyspace_name = 'no_such_ks'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("keyspace no_such_ks: count %d, %v", n, err)
	}
}

// TestBadInputPlanNoTombstone: plan and undelete of a row that was never deleted print
// one line saying so (once: placeholder lines, "deleted: 0001-01-01…", on stdout).
func TestBadInputPlanNoTombstone(t *testing.T) {
	s, ks := node.Keyspace(t)
	harness.Exec(t, s, `CREATE TABLE accounts (org text, id int, name text, PRIMARY KEY (org, id))`)
	if err := schema.ApplyTemplate(context.Background(), s, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"plan", "undelete"} {
		stdout, stderr, code := cli(t, "", "tombstone", sub, "--command", "c", "--key", "org=a,id=1", "--yes",
			"--hosts", node.Hosts()[0], "--keyspace", ks, "--table", "accounts")
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(stderr, "no delete to undo") || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one line saying there is no delete to undo", sub, code, stdout, stderr)
		}
	}
}
