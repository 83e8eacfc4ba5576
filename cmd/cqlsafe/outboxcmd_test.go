package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/outbox"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestOutboxCommands: an operator lists an outbox file, drops the record whose table
// is gone by its ID, and replays the rest onto Cassandra, where it lands at its pinned
// timestamp; mistakes are usage errors and touch nothing.
func TestOutboxCommands(t *testing.T) {
	s, ks := node.Keyspace(t)
	harness.Exec(t, s, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	path := filepath.Join(t.TempDir(), "outbox")
	o, err := outbox.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().UnixMicro() - 1000
	for i, cql := range []string{`INSERT INTO kv (id, v) VALUES (?, ?)`, `INSERT INTO gone (id, v) VALUES (?, ?)`} {
		if err := o.Append(&retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: cql, Values: []any{i, "secret"}}}, Timestamp: ts + int64(i), Idempotent: true}); err != nil {
			t.Fatal(err)
		}
	}
	list, _ := o.List()
	// Held by a service: the command says so and changes nothing.
	if _, errOut, code := cli(t, "", "outbox", "list", path); code != 1 || !strings.Contains(errOut, "open elsewhere") {
		t.Fatalf("list while held: exit %d, %q", code, errOut)
	}
	o.Close()

	out, _, code := cli(t, "", "outbox", "list", path)
	if code != 0 || !strings.Contains(out, list[0].ID) || !strings.Contains(out, "INSERT INTO gone") || strings.Contains(out, "secret") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"outbox"}, {"outbox", "show", path}, {"outbox", "drop", path}, {"outbox", "list"},
		{"outbox", "replay", path, "--hosts", node.Hosts()[0]}, {"outbox", "list", path, "extra"},
	} {
		if _, _, code := cli(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if _, errOut, code := cli(t, "", "outbox", "drop", path, "0123456789abcdef"); code != 1 || !strings.Contains(errOut, "no such record") {
		t.Fatalf("drop of an unknown ID: exit %d, %q", code, errOut)
	}
	if out, _, code := cli(t, "", "outbox", "drop", path, list[1].ID); code != 0 || !strings.Contains(out, "dropped 1") {
		t.Fatalf("drop: exit %d, %q", code, out)
	}
	out, errOut, code := cli(t, "", "outbox", "replay", path, "--hosts", node.Hosts()[0], "--keyspace", ks)
	if code != 0 || !strings.Contains(out, "applied 1") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	var v string
	var wt int64
	if err := s.Query(`SELECT v, WRITETIME(v) FROM kv WHERE id = 0`).Scan(&v, &wt); err != nil || v != "secret" || wt != ts {
		t.Fatalf("after replay: %q at %d (%v), want %q at %d", v, wt, err, "secret", ts)
	}
	if out, _, _ := cli(t, "", "outbox", "list", path); !strings.Contains(out, "(no records)") {
		t.Fatalf("after replay:\n%s", out)
	}
	// A mistyped path: an error, and no empty outbox left there.
	typo := filepath.Join(t.TempDir(), "outbx")
	if _, errOut, code := cli(t, "", "outbox", "list", typo); code != 1 || !strings.Contains(errOut, "no such file") {
		t.Fatalf("list of a path with no file: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(typo); err == nil {
		t.Fatal("list created an outbox at a mistyped path")
	}
	// Not an outbox: refused, untouched.
	cfg := writeFile(t, "config.yaml", "hosts: [a, b]\n")
	if _, errOut, code := cli(t, "", "outbox", "list", cfg); code != 1 || !strings.Contains(errOut, "not an outbox") {
		t.Fatalf("list of a config file: exit %d, %q", code, errOut)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "hosts: [a, b]\n" {
		t.Fatalf("the config file changed: %q", b)
	}
}
