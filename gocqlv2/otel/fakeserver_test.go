package cqlsafeotel_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	cqlsafeotel "github.com/cqlsafe/cqlsafe/gocqlv2/otel"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/internal/core/fakecql"
)

// fakeSession opens a v2 session on the fake server with the Instrumentation's
// observers and HedgingHosts, as the package documentation wires them.
func fakeSession(t *testing.T, f *fakecql.Server, in *cqlsafeotel.Instrumentation) *gocql.Session {
	t.Helper()
	host, port, _ := net.SplitHostPort(f.Addr())
	p, _ := strconv.Atoi(port)
	cl := gocql.NewCluster(host)
	cl.Port = p
	cl.ProtoVersion = 4
	cl.DisableInitialHostLookup = true
	cl.Timeout = 3 * time.Second
	cl.ConnectTimeout = 3 * time.Second
	cl.NumConns = 1
	cl.QueryObserver = in.QueryObserver(cl.QueryObserver)
	cl.BatchObserver = in.BatchObserver(cl.BatchObserver)
	cl.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.RoundRobinHostPolicy())
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatalf("session on the fake server: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func attrsOf(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestOtelV2ExecOnFakeServer: the wiring works on the v2 driver end to end (no
// Cassandra): one span, one attempt event numbered 1, with the fake node's address.
func TestOtelV2ExecOnFakeServer(t *testing.T) {
	f := fakecql.Start(t, nil)
	spans := tracetest.NewSpanRecorder()
	in, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	if err != nil {
		t.Fatal(err)
	}
	s := fakeSession(t, f, in)
	p := retry.NewPolicy(retry.WithTracer(in))
	if err := p.Exec(context.Background(), s.Query(fakeInsert, 1, "x"), retry.Operation("test.Put")); err != nil {
		t.Fatal(err)
	}
	var sp sdktrace.ReadOnlySpan
	for _, x := range spans.Ended() {
		if x.Name() == "test.Put" {
			sp = x
		}
	}
	if sp == nil {
		t.Fatal("no span")
	}
	evs := sp.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1: %v", len(evs), evs)
	}
	e := attrsOf(evs[0].Attributes)
	if e["cqlsafe.attempt"].AsInt64() != 1 || e["server.address"].AsString() != "127.0.0.1" {
		t.Errorf("attempt event %v", evs[0].Attributes)
	}
}

// TestOtelV2HedgeAttemptNumbers: a hedged write whose first request loses its
// response and whose hedge answers. The v2 driver keeps an attempt count per
// ExecContext call (newInternalQuery), and the v2 Policy runs a hedge as another
// ExecContext of the same query, so every hedge reports attempt 0; the span numbers
// the attempts it observes itself, and no two events say the same cqlsafe.attempt.
func TestOtelV2HedgeAttemptNumbers(t *testing.T) {
	f := fakecql.Start(t, func(id string, n int64) bool { return id == fakeInsert && n == 1 }) // the first EXECUTE's response is lost
	spans := tracetest.NewSpanRecorder()
	in, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	if err != nil {
		t.Fatal(err)
	}
	s := fakeSession(t, f, in)
	p := retry.NewPolicy(retry.WithTracer(in), retry.WithHedging(retry.HedgeDelayBounds(20*time.Millisecond, 20*time.Millisecond)))
	start := time.Now()
	if err := p.Exec(context.Background(), s.Query(fakeInsert, 1, "x"), retry.Operation("test.Hedged")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("took %v: no hedge answered", took)
	}
	var sp sdktrace.ReadOnlySpan
	for _, x := range spans.Ended() {
		if x.Name() == "test.Hedged" {
			sp = x
		}
	}
	if sp == nil {
		t.Fatal("no span")
	}
	a := attrsOf(sp.Attributes())
	if a["cqlsafe.hedges"].AsInt64() < 1 {
		t.Fatalf("no hedge sent: %v", sp.Attributes())
	}
	seen := map[int64]int{}
	for _, ev := range sp.Events() {
		seen[attrsOf(ev.Attributes)["cqlsafe.attempt"].AsInt64()]++
	}
	for n, c := range seen {
		if c > 1 {
			t.Errorf("%d attempt events say cqlsafe.attempt = %d (the first request's and the hedge's are not told apart): %v", c, n, sp.Events())
		}
	}
}

const fakeInsert = `INSERT INTO ks.kv (id, v) VALUES (?, ?)`
