package retry

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gocql/gocql"
)

// forceProto sets the protocol version s negotiated, as a session made with
// ProtoVersion: v against Cassandra 2.x would hold it (Cassandra 3.0 and later refuse
// v1 and v2, and the fake server speaks v4).
func forceProto(t *testing.T, s *gocql.Session, v int) {
	t.Helper()
	if sessionProtoField == nil {
		t.Skip("not checked on this gocql (the ScyllaDB fork speaks protocol v3 at least)")
	}
	f := reflect.ValueOf(s).Elem().FieldByIndex(sessionProtoField)
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetInt(int64(v))
}

// TestExecRefusesProtocolWithoutTimestamps: under protocol v1 or v2 gocql drops
// WithTimestamp, so a pinned write would take the coordinator's time on every attempt.
// Exec and ExecBatch refuse it, sending nothing; v3 and later write.
func TestExecRefusesProtocolWithoutTimestamps(t *testing.T) {
	if sessionProtoField == nil {
		t.Skip("not checked on this gocql (the ScyllaDB fork speaks protocol v3 at least)")
	}
	srv := startRV(t, func(int64) (time.Duration, bool) { return 0, false })
	sess := rvSession(t, srv)
	const insert = `INSERT INTO ks.t (id, v) VALUES (?, ?)`
	if err := sess.Query(insert, 0, "v").Exec(); err != nil { // prepare
		t.Fatal(err)
	}
	if got := sessionProto(sess); got < 3 {
		t.Fatalf("session negotiated v%d, want 3 or later", got)
	}
	p := NewPolicy(WithSchema(mapSchema{}))
	ctx := context.Background()
	for _, v := range []int{2, 1} {
		forceProto(t, sess, v)
		before := srv.n.Load()
		err := p.Exec(ctx, sess.Query(insert, 1, "v"))
		if err == nil || !strings.Contains(err.Error(), "no client timestamp") {
			t.Errorf("v%d: Exec = %v, want the protocol refused", v, err)
		}
		b := sess.NewBatch(gocql.UnloggedBatch)
		b.Query(insert, 2, "v")
		err = p.ExecBatch(ctx, sess, b)
		if err == nil || !strings.Contains(err.Error(), "no client timestamp") {
			t.Errorf("v%d: ExecBatch = %v, want the protocol refused", v, err)
		}
		if n := srv.n.Load() - before; n != 0 {
			t.Errorf("v%d: %d requests sent; want none", v, n)
		}
	}
	forceProto(t, sess, 4)
	if err := p.Exec(ctx, sess.Query(insert, 3, "v")); err != nil {
		t.Fatalf("v4: %v", err)
	}
}
