package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// refusedAddr is a loopback host:port where nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentAddr accepts TCP connections and never answers: a wrong port, a node that hangs.
func silentAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestConnectFailsFast runs every command that connects against a host that refuses and
// one that accepts TCP but never speaks CQL: each ends within its --timeout with one
// line naming the host, and none of gocql's own log.
func TestConnectFailsFast(t *testing.T) {
	t.Parallel()
	lintFile := writeFile(t, "q.cql", "INSERT INTO t (id, v) VALUES (?, ?);\n")
	// Each command's words; its flags follow, then tail. lint exits 2, not 1: 1 is its
	// "found an unsafe statement".
	type command struct {
		args, tail []string
		code       int
	}
	commands := map[string]command{
		"demo":               {args: []string{"demo"}},
		"lint":               {args: []string{"lint"}, tail: []string{lintFile}, code: 2},
		"schema apply":       {args: []string{"schema", "apply", "eventlog", "--keyspace", "ks"}},
		"tombstone list":     {args: []string{"tombstone", "list", "--keyspace", "ks", "--table", "t", "--key", "id=1"}},
		"tombstone plan":     {args: []string{"tombstone", "plan", "--keyspace", "ks", "--table", "t", "--key", "id=1", "--command", "c"}},
		"tombstone undelete": {args: []string{"tombstone", "undelete", "--keyspace", "ks", "--table", "t", "--key", "id=1", "--command", "c", "--yes"}},
		"migrate check":      {args: []string{"migrate", "check", "--keyspace", "ks", "--old", "a", "--new", "b"}},
		"migrate backfill":   {args: []string{"migrate", "backfill", "--keyspace", "ks", "--old", "a", "--new", "b"}},
		"migrate status":     {args: []string{"migrate", "status", "--keyspace", "ks", "--old", "a", "--new", "b"}},
		"migrate verify":     {args: []string{"migrate", "verify", "--keyspace", "ks", "--old", "a", "--new", "b"}},
	}
	hosts := []struct {
		name, addr, want string
		timeout          time.Duration
	}{
		{"refused", refusedAddr(t), "refused the connection", 5 * time.Second},
		{"silent", silentAddr(t), "gave no CQL answer within", 2 * time.Second},
	}
	for _, h := range hosts {
		for name, c := range commands {
			t.Run(h.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				args := append(append([]string(nil), c.args...), "--hosts", h.addr, "--timeout", h.timeout.String())
				args = append(args, c.tail...)
				want := c.code
				if want == 0 {
					want = 1
				}
				start := time.Now()
				_, stderr, code := cli(t, "", args...)
				elapsed := time.Since(start)
				if code != want {
					t.Errorf("exit %d, want %d", code, want)
				}
				// The binary's own start-up counts too; allow it two seconds.
				if elapsed > h.timeout+2*time.Second {
					t.Errorf("took %v with --timeout %v", elapsed.Round(time.Millisecond), h.timeout)
				}
				lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
				if len(lines) != 1 || !strings.Contains(stderr, "cannot connect to "+h.addr) || !strings.Contains(stderr, h.want) {
					t.Errorf("stderr is not one line naming %s and saying %q:\n%s", h.addr, h.want, stderr)
				}
				if strings.Contains(stderr, "gocql: ") && !strings.Contains(stderr, "cannot connect") {
					t.Errorf("gocql's log leaked:\n%s", stderr)
				}
				if !strings.Contains(stderr, "--hosts") || !strings.Contains(stderr, "native-node.sh") {
					t.Errorf("no advice in %q", stderr)
				}
			})
		}
	}
}
