package cqlsafeotel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	cqlsafeotel "github.com/cqlsafe/cqlsafe/gocqlv2/otel"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/settle"
)

// Wire the Instrumentation into the cluster's observers (chained with the ones it
// has) and into the retry Policy, as with gocql v1.7; only the import paths differ.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	inst, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}
	cluster := gocql.NewCluster("127.0.0.1:9042")
	cluster.QueryObserver = inst.QueryObserver(cluster.QueryObserver)
	cluster.BatchObserver = inst.BatchObserver(cluster.BatchObserver)
	policy := retry.NewPolicy(retry.WithTracer(inst))
	// session, err := cluster.CreateSession()
	// err = policy.Exec(ctx, session.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, id, v))

	// Without a cluster at hand: retry.Do's own span.
	err = retry.Do(context.Background(), func(context.Context) error { return nil }, retry.WithPolicy(policy))
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind(), s.InstrumentationScope().Name, err)
	}
	// Output: retry.Do client github.com/cqlsafe/cqlsafe/gocqlv2/otel <nil>
}

// TestOtelV2Options: invalid options are refused; a nil Instrumentation records
// nothing and never panics, through every method and both observers.
func TestOtelV2Options(t *testing.T) {
	for _, o := range []cqlsafeotel.Option{cqlsafeotel.WithTracerProvider(nil), cqlsafeotel.WithMeterProvider(nil), nil} {
		if _, err := cqlsafeotel.New(o); !errors.Is(err, cqlsafeotel.ErrInvalidOption) {
			t.Errorf("err = %v, want ErrInvalidOption", err)
		}
	}
	var nilIn *cqlsafeotel.Instrumentation
	ctx, tr := nilIn.Begin(context.Background(), retry.Execution{Operation: "x"})
	if ctx == nil || tr != nil {
		t.Errorf("nil Begin = %v, %v", ctx, tr)
	}
	nilIn.Settled(context.Background(), settle.Report{Kind: settle.KindWrite})
	next := &counting{}
	nilIn.QueryObserver(next).ObserveQuery(context.Background(), gocql.ObservedQuery{})
	nilIn.BatchObserver(next).ObserveBatch(context.Background(), gocql.ObservedBatch{})
	if next.n != 2 {
		t.Errorf("the chained observer saw %d calls, want 2", next.n)
	}
	if _, err := nilIn.ObserveClockOffset(retry.NewPolicy()); err == nil {
		t.Error("nil Instrumentation: ObserveClockOffset gave no error")
	}
	in, err := cqlsafeotel.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.ObserveClockOffset(nil); err == nil {
		t.Error("a nil Policy accepted")
	}
}

// TestOtelV2ObservedAttempt: an attempt the v2 driver reports to the observer, in an
// execution's context, becomes an attempt event with the v2 host's address and port;
// a query with another statement (run inside the execution's context) does not.
func TestOtelV2ObservedAttempt(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	in, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	host, err := gocql.NewHostInfoFromAddrPort(net.IPv4(127, 0, 0, 7), 9142)
	if err != nil {
		t.Fatal(err)
	}
	const stmt = "INSERT INTO kv (id, v) VALUES (?, ?)"
	ctx, tr := in.Begin(context.Background(), retry.Execution{Operation: "retry.Exec", Keyspace: "ks", Statement: stmt, Timestamp: 7, Idempotent: true})
	obs := in.QueryObserver(nil)
	start := time.Now()
	obs.ObserveQuery(ctx, gocql.ObservedQuery{Statement: stmt, Host: host, Start: start, End: start.Add(2 * time.Millisecond)})
	obs.ObserveQuery(ctx, gocql.ObservedQuery{Statement: "SELECT v FROM kv", Host: host, Start: start, End: start})
	obs.ObserveQuery(ctx, gocql.ObservedQuery{Statement: stmt, Start: start, End: start, Attempt: 1}) // no host
	tr.End(nil, 2)
	ended := spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans", len(ended))
	}
	evs := ended[0].Events()
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2 (the other statement is not an attempt): %v", len(evs), evs)
	}
	// Events by attempt: a success stays pending until the execution ends (it may be
	// a hedge's), so the second attempt's event comes first.
	byAttempt := map[int64]map[attribute.Key]attribute.Value{}
	for _, e := range evs {
		m := map[attribute.Key]attribute.Value{}
		for _, kv := range e.Attributes {
			m[kv.Key] = kv.Value
		}
		byAttempt[m["cqlsafe.attempt"].AsInt64()] = m
	}
	if a := byAttempt[1]; a["server.address"].AsString() != "127.0.0.7" || a["server.port"].AsInt64() != 9142 {
		t.Errorf("first attempt event %v", a)
	}
	if a, ok := byAttempt[2]; !ok || a["server.address"].Type() != attribute.EMPTY {
		t.Errorf("second attempt (no host): %v", a)
	}
}

type counting struct{ n int }

func (c *counting) ObserveQuery(context.Context, gocql.ObservedQuery) { c.n++ }
func (c *counting) ObserveBatch(context.Context, gocql.ObservedBatch) { c.n++ }
