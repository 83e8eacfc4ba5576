package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// KeyspaceName derives a valid, unique keyspace name from a test name.
func KeyspaceName(testName string) string {
	base := nonIdent.ReplaceAllString(strings.ToLower(testName), "_")
	base = strings.Trim(base, "_")
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		base = "t_" + base
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	suffix := "_" + hex.EncodeToString(b[:])
	if max := 48 - len(suffix); len(base) > max {
		base = base[:max]
	}
	return base + suffix
}

// CreateKeyspace creates a SimpleStrategy keyspace with the given replication factor and
// waits for schema agreement.
func (n *Node) CreateKeyspace(ctx context.Context, s *gocql.Session, name string, rf int) error {
	if !validKeyspace(name) {
		return fmt.Errorf("harness: invalid keyspace name %q", name)
	}
	q := fmt.Sprintf(`CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}`, name, rf)
	if err := s.Query(q).WithContext(ctx).Exec(); err != nil {
		return fmt.Errorf("harness: create keyspace %s: %w%s", name, err, n.logTail())
	}
	return s.AwaitSchemaAgreement(ctx)
}

// logTail is the last lines of a native node's log, for an error that says Cassandra did
// not answer (the data directory, log included, is removed when the node stops); empty
// for other nodes.
func (n *Node) logTail() string {
	if !n.isNative() {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return fmt.Sprintf("; last lines of %s:\n%s", n.native.logPath, n.native.logTail(40))
}

func validKeyspace(name string) bool {
	if len(name) == 0 || len(name) > 48 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	return !nonIdent.MatchString(name)
}

// Keyspace gives the test a fresh keyspace (replication factor 1) and a session bound to
// it. The keyspace is dropped and the session closed when the test ends (kept when
// CQLSAFE_KEEP_KEYSPACES=1, for debugging). On a nil node the test is skipped — or fails
// when CQLSAFE_REQUIRE_CASSANDRA=1.
func (n *Node) Keyspace(t testing.TB) (*gocql.Session, string) {
	t.Helper()
	n.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := KeyspaceName(t.Name())
	var admin *gocql.Session
	t.Cleanup(func() {
		if admin == nil {
			return
		}
		defer admin.Close()
		if os.Getenv("CQLSAFE_KEEP_KEYSPACES") == "1" {
			t.Logf("harness: keeping keyspace %s", name)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := admin.Query("DROP KEYSPACE IF EXISTS " + name).WithContext(ctx).Exec(); err != nil {
			t.Logf("harness: drop keyspace %s: %v", name, err)
		}
	})
	create := func() error {
		var err error
		if admin, err = n.Session(ctx, ""); err != nil {
			return err
		}
		return n.CreateKeyspace(ctx, admin, name, 1)
	}
	if err := create(); err != nil {
		// A native node that stops answering (seen once on 6.0-alpha2 in CI: it took
		// connections and answered reads, but every later test's CREATE KEYSPACE timed
		// out) is restarted, loudly, its log and a thread dump kept.
		if !unresponsive(err) || !n.isNative() {
			t.Fatal(err)
		}
		t.Log(err)
		if admin != nil {
			admin.Close()
			admin = nil
		}
		// A restart gets the time a first start gets, whatever the failed create used.
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer rcancel()
		kept, rerr := n.restartNative(rctx)
		if rerr != nil {
			t.Fatalf("harness: the node did not answer; restarting it failed: %v (its log kept in %q)", rerr, kept)
		}
		// Printed, not only logged: go test hides a passing test's log, and a restart must
		// show in CI's output.
		msg := fmt.Sprintf("harness: %s: the native node did not answer: restarted it (its log, with a thread dump, is kept in %s)", t.Name(), kept)
		fmt.Fprintln(os.Stderr, msg)
		t.Log(msg)
		ctx = rctx
		if err := create(); err != nil {
			t.Fatalf("after the restart: %v", err)
		}
	}
	s, err := n.Session(ctx, name)
	t.Cleanup(func() {
		if s != nil {
			s.Close()
		}
	})
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	return s, name
}

// Require skips the test when there is no node, or fails it when Cassandra is required.
func (n *Node) Require(t testing.TB) {
	t.Helper()
	if n != nil && n.startErr == nil && len(n.hosts) > 0 {
		return
	}
	reason := howToGetOne
	var unavailable *UnavailableError
	switch {
	case n != nil && errors.As(n.startErr, &unavailable):
		reason = n.startErr.Error() // says what to do, path by path
	case n != nil && n.startErr != nil:
		reason = n.startErr.Error() + "\n" + howToGetOne
	}
	if Required() {
		t.Fatalf("harness: %s=1 but %s", EnvRequire, reason)
	}
	t.Skipf("harness: %s", reason)
}

// Exec runs CQL statements in order and waits for schema agreement after each, failing
// the test on error. For test setup (CREATE TABLE …).
func Exec(t testing.TB, s *gocql.Session, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, stmt := range stmts {
		if err := s.Query(stmt).WithContext(ctx).Exec(); err != nil {
			t.Fatalf("harness: %s: %v", stmt, err)
		}
		if err := s.AwaitSchemaAgreement(ctx); err != nil {
			t.Fatalf("harness: schema agreement after %s: %v", stmt, err)
		}
	}
}
