package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// closingAddr accepts TCP, reads the client's first frame (OPTIONS/STARTUP) and hangs
// up: a proxy with no backend, a TLS-only port, another service that drops strangers.
func closingAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { c.Read(make([]byte, 512)); c.Close() }()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

// TestConnectHostClosesNamed: a host that hangs up after the first frame fails fast, and
// the line names it and says what to try (it once said only "cannot connect: gocql:
// unable to create session: unable to connect to initial hosts: EOF").
func TestConnectHostClosesNamed(t *testing.T) {
	addr := closingAddr(t)
	_, stderr, code := cli(t, "", "tombstone", "list", "--keyspace", "ks", "--table", "t", "--key", "id=1", "--hosts", addr, "--timeout", "2s")
	if code != 1 || !strings.Contains(stderr, addr) || !strings.Contains(stderr, "--hosts") {
		t.Errorf("exit %d; stderr does not name %s nor say what to try:\n%s", code, addr, stderr)
	}
}

// TestConnectTimeoutNotPositive: --timeout 0 (or negative) is a usage error, not "did not
// accept a TCP connection in time".
func TestConnectTimeoutNotPositive(t *testing.T) {
	for _, to := range []string{"0", "-1s"} {
		_, stderr, code := cli(t, "", "tombstone", "list", "--keyspace", "ks", "--table", "t", "--key", "id=1", "--hosts", refusedAddr(t), "--timeout", to)
		if code != 2 || !strings.Contains(stderr, "--timeout") || strings.Contains(stderr, "in time") {
			t.Errorf("--timeout %s: exit %d, want a usage error (2) about --timeout:\n%s", to, code, stderr)
		}
	}
}

// TestConnectBareIPv6: --hosts ::1 is a host (it was answered "--hosts is required").
func TestConnectBareIPv6(t *testing.T) {
	_, stderr, _ := cli(t, "", "tombstone", "list", "--keyspace", "ks", "--table", "t", "--key", "id=1", "--hosts", "::1", "--timeout", "2s")
	if strings.Contains(stderr, "--hosts is required") {
		t.Errorf("a bare IPv6 --hosts is called missing:\n%s", stderr)
	}
}

// TestConnectSilentBesideWorking: with a working node among --hosts, a silent one beside
// it does not fail the command. (gocql shuffles its contact points and could spend
// ConnectTimeout on the silent one: 5 runs in 6 failed before the probe kept silent
// hosts out.)
func TestConnectSilentBesideWorking(t *testing.T) {
	good := node.Hosts()[0]
	lintFile := writeFile(t, "q.cql", "INSERT INTO t (id, v) VALUES (?, ?);\n")
	silent := silentAddr(t)
	fails := 0
	for range 6 {
		start := time.Now()
		_, stderr, code := cli(t, "", "lint", "--hosts", silent+","+good, "--timeout", "2s", lintFile)
		if code != 0 {
			fails++
			t.Logf("exit %d after %v: %s", code, time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr))
		}
	}
	if fails > 0 {
		t.Errorf("%d of 6 runs failed although %s answers", fails, good)
	}
}

// TestConnectLintNotCQLFirst: lint says its input is not CQL before it connects, so a
// silent host does not hold that line back for --timeout.
func TestConnectLintNotCQLFirst(t *testing.T) {
	notCQL := writeFile(t, "notes.txt", "remember to buy milk\n")
	start := time.Now()
	_, stderr, code := cli(t, "", "lint", "--hosts", silentAddr(t), "--timeout", "5s", notCQL)
	if d := time.Since(start); code != 2 || !strings.Contains(stderr, "is not CQL") || d > 3*time.Second {
		t.Errorf("exit %d after %v: %s", code, d.Round(time.Millisecond), stderr)
	}
}

// TestConnectDeadHostNamed: with one of --hosts refusing and another answering, the
// command goes on with the one that answers and names the other on stderr (it reported
// ready and never named it).
func TestConnectDeadHostNamed(t *testing.T) {
	good := node.Hosts()[0]
	dead := refusedAddr(t)
	lintFile := writeFile(t, "q.cql", "INSERT INTO t (id, v) VALUES (?, ?);\n")
	_, stderr, code := cli(t, "", "lint", "--hosts", dead+","+good, "--timeout", "2s", lintFile)
	if code != 0 || !strings.Contains(stderr, dead) || !strings.Contains(stderr, "refused") || !strings.Contains(stderr, "going on with "+good) {
		t.Errorf("exit %d; want 0 with %s named as refusing and %s used:\n%s", code, dead, good, stderr)
	}
}
