package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

func TestSplitKey(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][2]string
		err  string
	}{
		{"a=1,b=x", [][2]string{{"a", "1"}, {"b", "x"}}, ""},
		{" a = 1 , b =  x ", [][2]string{{"a", "1"}, {"b", "x"}}, ""},
		{"name='a,b', id=2", [][2]string{{"name", "a,b"}, {"id", "2"}}, ""},
		{"name=' padded '", [][2]string{{"name", " padded "}}, ""},
		{"name='it''s'", [][2]string{{"name", "it's"}}, ""},
		{"name=''", [][2]string{{"name", ""}}, ""},
		{"eq=a=b", [][2]string{{"eq", "a=b"}}, ""},
		{"name=\t'a,b'\t, id=2", [][2]string{{"name", "a,b"}, {"id", "2"}}, ""},
		{"name='open", nil, "not closed"},
		{"name='a'b", nil, "after the closing quote"},
		{"name=it's", nil, "written in quotes"},
		{"org", nil, "not col=value"},
		{"=1", nil, "not col=value"},
		{"a=1,", nil, "not col=value"},
	} {
		got, err := splitKey(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("splitKey(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("splitKey(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestTombstoneKeyTypes: a row keyed by a float, a timestamp with milliseconds and a
// text with a comma is named on the command line and found; a timestamp with digits
// below the millisecond names no row and is refused (it was truncated silently, and
// the undelete restored the .000 row).
func TestTombstoneKeyTypes(t *testing.T) {
	s, ks := node.Keyspace(t)
	ctx := context.Background()
	harness.Exec(t, s, `CREATE TABLE readings (k float, at timestamp, tag text, v text, PRIMARY KEY (k, at, tag))`)
	if err := schema.ApplyTemplate(ctx, s, "tombstones", schema.Params{Keyspace: ks}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 1, 1, 0, 0, 0, int(time.Millisecond), time.UTC)
	for _, when := range []time.Time{at, at.Truncate(time.Second)} {
		if err := s.Query(`INSERT INTO readings (k, at, tag, v) VALUES (?, ?, ?, ?)`, float32(1.5), when, "a,b", "x"+when.Format(".000")).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	tbl, _ := overwrite.Describe(ctx, s, ks, "readings")
	st, err := tombstone.New(ctx, s, ks, "tombstones")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, tbl, map[string]any{"k": float32(1.5), "at": at, "tag": "a,b"}, "cmd-1"); err != nil {
		t.Fatal(err)
	}
	base := []string{"--hosts", node.Hosts()[0], "--keyspace", ks, "--table", "readings"}
	out, errOut, code := cli(t, "", append(append([]string{"tombstone", "list"}, base...), "--key", "k=1.5, at=2024-01-01T00:00:00.001Z, tag='a,b'")...)
	if code != 0 || !strings.Contains(out, "cmd-1") || !strings.Contains(out, "v=x.001") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code = cli(t, "", append(append([]string{"tombstone", "undelete", "--command", "cmd-1", "--yes"}, base...), "--key", "k=1.5,at=2024-01-01T00:00:00.0009Z,tag='a,b'")...)
	if code != 2 || !strings.Contains(errOut, "milliseconds") {
		t.Fatalf("sub-millisecond key: exit %d, %q; want a usage error", code, errOut)
	}
	var v string
	if err := s.Query(`SELECT v FROM readings WHERE k = ? AND at = ? AND tag = ?`, float32(1.5), at.Truncate(time.Second), "a,b").Scan(&v); err != nil || v != "x.000" {
		t.Fatalf("the .000 row: %q, %v", v, err)
	}
}
