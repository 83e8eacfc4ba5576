package cqlsafeotel_test

import (
	"context"
	"net"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	cqlsafeotel "github.com/cqlsafe/cqlsafe/gocqlv2/otel"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
)

// TestOtelV2HostAddresses: server.address / server.port of v2 hosts: IPv6 unbracketed,
// and one host object reused across Instrumentations (the cache is per
// Instrumentation, keyed by the boxed pointer).
func TestOtelV2HostAddresses(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	in, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	if err != nil {
		t.Fatal(err)
	}
	v6, err := gocql.NewHostInfoFromAddrPort(net.ParseIP("2001:db8::7"), 9142)
	if err != nil {
		t.Fatal(err)
	}
	const stmt = "INSERT INTO kv (id, v) VALUES (?, ?)"
	obs := in.QueryObserver(nil)
	for i := 0; i < 2; i++ { // the second time from the cache
		ctx, tr := in.Begin(context.Background(), retry.Execution{Operation: "op", Statement: stmt, Timestamp: 1, Idempotent: true})
		now := time.Now()
		obs.ObserveQuery(ctx, gocql.ObservedQuery{Statement: stmt, Host: v6, Start: now, End: now})
		tr.End(nil, 1)
	}
	for _, sp := range spans.Ended() {
		if len(sp.Events()) != 1 {
			t.Fatalf("events %v", sp.Events())
		}
		e := attrsOf(sp.Events()[0].Attributes)
		if e["server.address"].AsString() != "2001:db8::7" || e["server.port"].AsInt64() != 9142 {
			t.Errorf("IPv6 host: %v", sp.Events()[0].Attributes)
		}
	}
}
