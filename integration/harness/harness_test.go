package harness

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestParseHosts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "127.0.0.1:9042", want: []string{"127.0.0.1:9042"}},
		{in: "127.0.0.1", want: []string{"127.0.0.1:9042"}},
		{in: " 127.0.0.1:1, 127.0.0.2:2 ,", want: []string{"127.0.0.1:1", "127.0.0.2:2"}},
		{in: "[::1]:9043", want: []string{"[::1]:9043"}},
		{in: "[::1]", want: []string{"[::1]:9042"}},
		{in: "::1", want: []string{"[::1]:9042"}},
		{in: "", bad: true},
		{in: " , ", bad: true},
		{in: "a:b:c", bad: true},
	} {
		got, err := ParseHosts(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseHosts(%q) = %v, want error", tc.in, got)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("ParseHosts(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestKeyspaceName(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range []string{"TestX", "TestX", "Test/sub case#1", strings.Repeat("TestLong", 20), "9lives", "___"} {
		ks := KeyspaceName(name)
		if !validKeyspace(ks) {
			t.Errorf("KeyspaceName(%q) = %q, not a valid keyspace name", name, ks)
		}
		if seen[ks] {
			t.Errorf("KeyspaceName(%q) = %q repeated", name, ks)
		}
		seen[ks] = true
	}
}

func TestStartUnreachableHosts(t *testing.T) {
	ctx := context.Background()
	n, err := Start(ctx, WithHosts("127.0.0.1:1"), WithStartTimeout(2*time.Second))
	//lint:ignore SA5001 Close is nil-safe: cleanup is registered before the error check, as in testcontainers-go
	defer n.Close(ctx)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Start against a closed port: err = %v, want ErrUnavailable", err)
	}
}

func TestNilNodeIsSafe(t *testing.T) {
	var n *Node
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Nodetool(context.Background(), "status"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Nodetool on nil node: %v", err)
	}
}

// TestMainFailsWhenRequired runs a child test binary whose TestMain uses Main with no
// reachable Cassandra: with CQLSAFE_REQUIRE_CASSANDRA=1 the package must fail, without it
// the test must skip.
func TestMainFailsWhenRequired(t *testing.T) {
	if os.Getenv("HARNESS_CHILD") == "1" {
		return
	}
	for _, required := range []bool{true, false} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildNeedsCassandra$", "-test.v")
		cmd.Env = append(os.Environ(), "HARNESS_CHILD=1", EnvHosts+"=127.0.0.1:1")
		if required {
			cmd.Env = append(cmd.Env, EnvRequire+"=1")
		} else {
			cmd.Env = append(cmd.Env, EnvRequire+"=0")
		}
		out, err := cmd.CombinedOutput()
		switch {
		case required && err == nil:
			t.Errorf("required: child passed, want failure:\n%s", out)
		case required && !strings.Contains(string(out), EnvRequire+"=1 but"):
			t.Errorf("required: failure does not say why:\n%s", out)
		case !required && err != nil:
			t.Errorf("not required: child failed, want skip: %v\n%s", err, out)
		case !required && !strings.Contains(string(out), "SKIP"):
			t.Errorf("not required: child did not skip:\n%s", out)
		}
	}
}

var childNode *Node

func TestChildNeedsCassandra(t *testing.T) {
	if os.Getenv("HARNESS_CHILD") != "1" {
		t.Skip("only runs as the child of TestMainFailsWhenRequired")
	}
	childNode.Keyspace(t)
	t.Fatal("Keyspace returned without a Cassandra")
}

func TestMain(m *testing.M) {
	if os.Getenv("HARNESS_CHILD") == "1" {
		// Keep the child fast: the closed port is refused at once, but bound the wait.
		os.Setenv(EnvHosts, "127.0.0.1:1")
		os.Exit(mainWithTimeout(m, &childNode, 3*time.Second))
	}
	os.Exit(m.Run())
}
