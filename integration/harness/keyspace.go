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
		return fmt.Errorf("harness: create keyspace %s: %w", name, err)
	}
	return s.AwaitSchemaAgreement(ctx)
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
	admin, err := n.Session(ctx, "")
	t.Cleanup(func() {
		if admin != nil {
			admin.Close()
		}
	})
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	name := KeyspaceName(t.Name())
	t.Cleanup(func() {
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
	if err := n.CreateKeyspace(ctx, admin, name, 1); err != nil {
		t.Fatal(err)
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
