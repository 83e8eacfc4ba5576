package schema

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSchemaRenderAll(t *testing.T) {
	names := map[string]bool{}
	for _, tm := range Templates() {
		names[tm.Name] = true
		out, err := Render(tm.Name, Params{Keyspace: "app", ReplicationFactor: 3})
		if err != nil {
			t.Fatalf("%s: %v", tm.Name, err)
		}
		if strings.Contains(out, "{{") || !strings.Contains(out, `"app"`) {
			t.Fatalf("%s rendered badly:\n%s", tm.Name, out)
		}
		stmts, err := Statements(out)
		if err != nil || len(stmts) == 0 {
			t.Fatalf("%s: %d statements, %v", tm.Name, len(stmts), err)
		}
		for _, f := range Lint(out) {
			if f.Severity == SeverityError {
				t.Errorf("%s: template fails its own lint: %s", tm.Name, f)
			}
		}
	}
	for _, want := range []string{"keyspace", "eventlog", "attributes", "tombstones", "wide_table"} {
		if !names[want] {
			t.Errorf("template %s missing", want)
		}
	}
}

func TestSchemaRenderParams(t *testing.T) {
	out, _ := Render("keyspace", Params{Keyspace: "app", Datacenters: map[string]int{"dc-2": 3, "dc1": 3}})
	if !strings.Contains(out, `{'class': 'NetworkTopologyStrategy', 'dc-2': 3, 'dc1': 3}`) {
		t.Fatalf("replication: %s", out)
	}
	out, _ = Render("tombstones", Params{Keyspace: "app"})
	if !strings.Contains(out, "default_time_to_live = 2592000") {
		t.Fatalf("tombstones default TTL: %s", out)
	}
	out, _ = Render("eventlog", Params{Keyspace: "app", Table: "Orders", TTL: time.Hour})
	if !strings.Contains(out, `"app"."Orders"`) || !strings.Contains(out, `"Orders_buckets"`) || !strings.Contains(out, "default_time_to_live = 3600") {
		t.Fatalf("eventlog: %s", out)
	}
	for _, p := range []Params{
		{},
		{Keyspace: `app"; DROP KEYSPACE x; --`},
		{Keyspace: "app", Table: "bad-name"},
		{Keyspace: "app", ReplicationFactor: 11},
		{Keyspace: "app", Datacenters: map[string]int{"dc1": 0}},
		{Keyspace: "app", Datacenters: map[string]int{"dc'1": 1}},
		{Keyspace: "app", TTL: 1500 * time.Millisecond},
		{Keyspace: "app", TTL: -time.Second},
		{Keyspace: "app", Table: strings.Repeat("x", 45)},
	} {
		if _, err := Render("eventlog", p); !errors.Is(err, ErrBadParams) {
			t.Errorf("Render(%+v) err = %v, want ErrBadParams", p, err)
		}
	}
	if _, err := Render("nope", Params{Keyspace: "app"}); !errors.Is(err, ErrUnknownTemplate) {
		t.Fatalf("unknown template: %v", err)
	}
}

func TestSchemaStatements(t *testing.T) {
	got, err := Statements("-- c\nCREATE TABLE a (k int PRIMARY KEY); /* x */ INSERT INTO a (k) VALUES ('x;y');\n")
	if err != nil || len(got) != 2 || got[0] != "CREATE TABLE a (k int PRIMARY KEY)" || got[1] != "INSERT INTO a (k) VALUES ('x;y')" {
		t.Fatalf("%q %v", got, err)
	}
}

func TestSchemaLint(t *testing.T) {
	cql := `
CREATE TABLE IF NOT EXISTS page_views (page text PRIMARY KEY, n counter);
CREATE TABLE IF NOT EXISTS carts (id uuid PRIMARY KEY, items list<text>, tags frozen<list<text>>);
CREATE TABLE IF NOT EXISTS readings (sensor text, at timestamp, v double, PRIMARY KEY (sensor, at));
CREATE TABLE IF NOT EXISTS readings2 (sensor text, day date, at timestamp, v double, PRIMARY KEY ((sensor, day), at));
CREATE TABLE plain (k int PRIMARY KEY);
INSERT INTO events (id, at) VALUES (uuid(), toTimestamp(now()));
INSERT INTO events (id, at) VALUES (?, ?);
`
	var rules []string
	for _, f := range Lint(cql) {
		rules = append(rules, f.Rule)
	}
	want := "counter list unbucketed-time-series repeat-unsafe-ddl not-idempotent not-idempotent"
	if strings.Join(rules, " ") != want {
		t.Fatalf("rules %v, want %s\n%v", rules, want, Lint(cql))
	}
	if f := Lint(cql)[0]; f.Line != 2 || f.Statement != 1 {
		t.Fatalf("position of first finding: %+v", f)
	}
	if f := Lint("SELECT 'open"); len(f) != 1 || f[0].Rule != "syntax" {
		t.Fatalf("syntax: %v", f)
	}
}

func FuzzLint(f *testing.F) {
	for _, tm := range Templates() {
		src, _ := Source(tm.Name)
		f.Add(src)
	}
	f.Add("CREATE TABLE t (a int, PRIMARY KEY ((a")
	f.Fuzz(func(t *testing.T, s string) {
		_ = Lint(s)
		_, _ = Statements(s)
	})
}
