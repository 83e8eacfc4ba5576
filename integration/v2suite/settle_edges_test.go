package v2suite

import (
	"context"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	v1 "github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/settle"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	v1retry "github.com/cqlsafe/cqlsafe/retry"
	v1settle "github.com/cqlsafe/cqlsafe/settle"
)

// reviewUnknown is the outcome-unknown error of one INSERT INTO tb (k, v) VALUES (1, 1)
// pinned at ts, for each driver.
func reviewUnknown(tb string, ts int64) (*retry.OutcomeUnknownError, *v1retry.OutcomeUnknownError) {
	cql := `INSERT INTO ` + tb + ` (k, v) VALUES (?, ?)`
	return &retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: cql, Values: []any{1, 1}}}, Timestamp: ts, Idempotent: true},
		&v1retry.OutcomeUnknownError{Statements: []v1retry.Statement{{CQL: cql, Values: []any{1, 1}}}, Timestamp: ts, Idempotent: true}
}

// reviewLanded writes (1, 1) into tb at ts with the harness's session and checks
// Cassandra holds it.
func reviewLanded(t *testing.T, s0 *v1.Session, tb string, ts int64) {
	t.Helper()
	if err := s0.Query(`INSERT INTO `+tb+` (k, v) VALUES (1, 1) USING TIMESTAMP ?`, ts).Exec(); err != nil {
		t.Fatal(err)
	}
	if wt := writetimeV1(t, s0, `SELECT WRITETIME(v) FROM `+tb+` WHERE k = 1`); wt != ts {
		t.Fatalf("%s: Cassandra holds v at %d, want %d", tb, wt, ts)
	}
}

// TestV2SettleReviewLongTableName: Cassandra 5.0 accepts a table name longer than 48
// characters, and holds the write at its pinned timestamp; settle (cb96479, gocql's
// metadata) said Landed; table.Describe refused the name (over 48 characters), so
// both adapters said Unsettleable (found by review).
func TestV2SettleReviewLongTableName(t *testing.T) {
	s0, ks := node.Keyspace(t)
	long := "t" + strings.Repeat("x", 59)
	harness.Exec(t, s0, `CREATE TABLE `+long+` (k int PRIMARY KEY, v int)`)
	ts := time.Now().UnixMicro()
	reviewLanded(t, s0, long, ts)
	s, _ := proxied(t, ks, 5*time.Second)
	ou, ou1 := reviewUnknown(long, ts)
	if st, err := settle.Write(context.Background(), s, ou); err != nil || st.Outcome != settle.Landed {
		t.Errorf("v2: 60-character table name: %v, %v; want landed", st.Outcome, err)
	}
	if st, err := v1settle.Write(context.Background(), s0, ou1); err != nil || st.Outcome != v1settle.Landed {
		t.Errorf("v1: 60-character table name: %v, %v; want landed", st.Outcome, err)
	}
}

// TestV2SettleReviewSessionConsistencyAny: a session whose default consistency is ANY
// (a write-only level) settles at QUORUM as before; but table.Describe now reads
// system.local/system.peers (and system_schema.types) at the session's default
// consistency, which Cassandra refuses for reads, so both adapters said Unsettleable (found by review).
func TestV2SettleReviewSessionConsistencyAny(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (k int PRIMARY KEY, v int)`)
	ts := time.Now().UnixMicro()
	reviewLanded(t, s0, "kv", ts)
	ou, ou1 := reviewUnknown("kv", ts)
	s, _ := proxiedWith(t, ks, 5*time.Second, func(cl *gocql.ClusterConfig) { cl.Consistency = gocql.Any })
	if st, err := settle.Write(context.Background(), s, ou); err != nil || st.Outcome != settle.Landed {
		t.Errorf("v2: session at ANY: %v, %v; want landed", st.Outcome, err)
	}
	cl := node.Cluster(ks)
	cl.Consistency = v1.Any
	sa, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	if st, err := v1settle.Write(context.Background(), sa, ou1); err != nil || st.Outcome != v1settle.Landed {
		t.Errorf("v1: session at ANY: %v, %v; want landed", st.Outcome, err)
	}
}

// TestV2SettleReviewAtSerial: TestV2SettleWrite asserts At(SERIAL) is refused, but only
// with a counter write, which is unsettleable anyway. In the v2 driver SERIAL (0x08) and
// LOCAL_SERIAL (0x09) are Consistency values below LocalOne (0x0A), so At accepts them
// and Write reads write times at SERIAL.
func TestV2SettleReviewAtSerial(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (k int PRIMARY KEY, v int)`)
	ts := time.Now().UnixMicro()
	reviewLanded(t, s0, "kv", ts)
	s, _ := proxied(t, ks, 5*time.Second)
	ou, _ := reviewUnknown("kv", ts)
	for _, c := range []gocql.Consistency{gocql.Serial, gocql.LocalSerial} {
		if st, err := settle.Write(context.Background(), s, ou, settle.At(c)); err == nil {
			t.Errorf("At(%v) accepted: %v, read at %v", c, st.Outcome, st.Consistency)
		}
	}
}

// TestV2SettleReviewLWTValues: conditional writes that Cassandra applied (it says
// [applied] = true and holds the values) which LWT calls not applied, because the value
// it expects is not the one Cassandra stores (pre-existing: the same on cb96479's v1
// code): a set bound with a duplicate element (Cassandra stores it once), a double
// literal NaN (Java's NaN bits, not Go's), a float literal that rounds differently
// through float64 (Cassandra parses it as a float).
func TestV2SettleReviewLWTValues(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE st (k int PRIMARY KEY, tags set<text>, d double, f float, v int)`)
	s, _ := proxied(t, ks, 5*time.Second)
	for i, c := range []struct {
		cql  string
		vals []any
	}{
		{`INSERT INTO st (k, tags, v) VALUES (?, ?, ?) IF NOT EXISTS`, []any{1, []string{"a", "a"}, 1}},
		{`UPDATE st SET d = NaN WHERE k = 1 IF v = 1`, nil},
		{`UPDATE st SET f = 1.0000000596046447753906250001 WHERE k = 1 IF v = 1`, nil},
	} {
		applied, err := s0.Query(c.cql, c.vals...).MapScanCAS(map[string]any{})
		if err != nil || !applied {
			t.Fatalf("%s: applied %v, %v", c.cql, applied, err)
		}
		r, err := settle.LWT(context.Background(), s, retry.Statement{CQL: c.cql, Values: c.vals})
		if err != nil || r.Outcome == settle.LWTNotApplied {
			t.Errorf("v2: %d: %s: applied, LWT says %v (%s), %v", i, c.cql, r.Outcome, r.Why, err)
		}
		r1, err := v1settle.LWT(context.Background(), s0, v1retry.Statement{CQL: c.cql, Values: c.vals})
		if err != nil || r1.Outcome == v1settle.LWTNotApplied {
			t.Errorf("gocql v1.7: %d: %s: applied, LWT says %v (%s), %v", i, c.cql, r1.Outcome, r1.Why, err)
		}
	}
}
