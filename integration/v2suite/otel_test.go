package v2suite

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/cqlsafe/cqlsafe/gocqlv2/clientid"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/gocqlv2/otel"
	"github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/gocqlv2/settle"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/integration/otelrec"
)

// otelSession is proxied with the Instrumentation's observers chained in front of a
// counting one, as an application that already had observers would wire them.
func otelSession(t *testing.T, ks string, inst *cqlsafeotel.Instrumentation) (*gocql.Session, *faultproxy.Proxy, *v2Counting) {
	counting := &v2Counting{}
	s, px := proxiedWith(t, ks, 300*time.Millisecond, func(cl *gocql.ClusterConfig) {
		cl.QueryObserver, cl.BatchObserver = counting, counting
		cl.QueryObserver = inst.QueryObserver(cl.QueryObserver)
		cl.BatchObserver = inst.BatchObserver(cl.BatchObserver)
	})
	return s, px, counting
}

type v2Counting struct{ queries, batches atomic.Int64 }

func (o *v2Counting) ObserveQuery(context.Context, gocql.ObservedQuery) { o.queries.Add(1) }
func (o *v2Counting) ObserveBatch(context.Context, gocql.ObservedBatch) { o.batches.Add(1) }

// TestV2OtelDroppedResponse: gocqlv2/otel on an INSERT whose response is dropped after
// Cassandra applied it. One span covers the logical write, its cqlsafe.timestamp the
// WRITETIME Cassandra holds, with two attempt events (a client timeout retried, then
// fine) carrying the v2 driver's host; the application's own observer saw both; the
// bound value is nowhere. Then settle.Write of a second dropped INSERT, refused a retry
// (WithMaxAttempts(1)), reports landed to the same Instrumentation: an event on the
// caller's span and cqlsafe.settle.results.
func TestV2OtelDroppedResponse(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rec := otelrec.New(t)
	inst, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(rec.TP), cqlsafeotel.WithMeterProvider(rec.MP))
	if err != nil {
		t.Fatal(err)
	}
	s, px, counting := otelSession(t, ks, inst)
	p := retry.NewPolicy(retry.WithTracer(inst), retry.WithBackoff(5*time.Millisecond, 20*time.Millisecond))

	const secret = "value-never-recorded-v2-51c"
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	before := counting.queries.Load()
	if err := p.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, secret), retry.Operation("test.Put")); err != nil {
		t.Fatal(err)
	}
	if got := px.Stats().Dropped.Load(); got != 1 {
		t.Fatalf("proxy dropped %d responses, want 1", got)
	}
	var v string
	var wt int64
	if err := s0.Query(`SELECT v, WRITETIME(v) FROM kv WHERE id = 1`).Scan(&v, &wt); err != nil || v != secret {
		t.Fatalf("read back %q, %v", v, err)
	}
	spans := rec.Spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want one for the logical write: %v", len(spans), otelrec.SpanNames(spans))
	}
	sp := spans[0]
	if sp.Name() != "test.Put" || sp.SpanKind() != trace.SpanKindClient || sp.InstrumentationScope().Name != cqlsafeotel.ScopeName {
		t.Errorf("span %q kind %v scope %q", sp.Name(), sp.SpanKind(), sp.InstrumentationScope().Name)
	}
	a := otelrec.Attrs(sp.Attributes())
	for k, want := range map[attribute.Key]attribute.Value{
		"db.system.name":     attribute.StringValue("cassandra"),
		"db.namespace":       attribute.StringValue(ks),
		"db.operation.name":  attribute.StringValue("INSERT"),
		"cqlsafe.timestamp":  attribute.Int64Value(wt),
		"cqlsafe.idempotent": attribute.BoolValue(true),
		"cqlsafe.attempts":   attribute.IntValue(2),
		"cqlsafe.outcome":    attribute.StringValue("ok"),
	} {
		if got, ok := a[k]; !ok || got != want {
			t.Errorf("span attribute %s = %v (set %v), want %v", k, got.String(), ok, want.String())
		}
	}
	evs := sp.Events()
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2 attempts: %v", len(evs), evs)
	}
	first, second := otelrec.Attrs(evs[0].Attributes), otelrec.Attrs(evs[1].Attributes)
	for i, e := range []map[attribute.Key]attribute.Value{first, second} {
		if e["cqlsafe.attempt"].AsInt64() != int64(i+1) || e["server.address"].AsString() != "127.0.0.1" || e["server.port"].AsInt64() == 0 {
			t.Errorf("event %d: %v", i, evs[i].Attributes)
		}
	}
	if first["error.type"].AsString() != "client_timeout" || first["cqlsafe.decision"].AsString() != "retry" || first["cqlsafe.latency_ms"].AsFloat64() < 250 {
		t.Errorf("first attempt: %v, want a client_timeout of about 300 ms retried", evs[0].Attributes)
	}
	if _, ok := second["error.type"]; ok {
		t.Errorf("second attempt has an error: %v", evs[1].Attributes)
	}
	if got := counting.queries.Load() - before; got != 2 {
		t.Errorf("the application's own observer saw %d attempts, want 2 (chained)", got)
	}
	otelrec.AssertNoValue(t, sp, secret)
	op := attribute.String("cqlsafe.operation", "test.Put")
	if got := rec.Sum(t, "cqlsafe.attempts", op); got != 2 {
		t.Errorf("cqlsafe.attempts = %d, want 2: %v", got, rec.Points(t, "cqlsafe.attempts"))
	}
	if got := rec.Sum(t, "cqlsafe.retries", op, attribute.String("error.type", "client_timeout")); got != 1 {
		t.Errorf("cqlsafe.retries = %d, want 1: %v", got, rec.Points(t, "cqlsafe.retries"))
	}

	// settle.Write, observed: the second INSERT is not retried, its outcome unknown.
	once := retry.NewPolicy(retry.WithTracer(inst), retry.WithMaxAttempts(1))
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	err = once.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 2, "b"))
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) {
		t.Fatalf("err = %v, want an outcome-unknown error", err)
	}
	ctx, app := rec.TP.Tracer("app").Start(context.Background(), "app.Repair")
	st, err := settle.Write(ctx, s, ou, settle.WithObserver(inst))
	app.End()
	if err != nil || st.Outcome != settle.Landed {
		t.Fatalf("settle.Write = %v, %v; want landed", st.Outcome, err)
	}
	if got := rec.Sum(t, "cqlsafe.settle.results", attribute.String("cqlsafe.settle.kind", "write"),
		attribute.String("cqlsafe.settle.outcome", "landed")); got != 1 {
		t.Errorf("cqlsafe.settle.results{write, landed} = %d, want 1: %v", got, rec.Points(t, "cqlsafe.settle.results"))
	}
	if got := rec.Sum(t, "cqlsafe.outcome_unknown", attribute.String("error.type", "client_timeout")); got != 1 {
		t.Errorf("cqlsafe.outcome_unknown = %d, want 1", got)
	}
	var settled bool
	for _, sp := range rec.Spans.Ended() {
		if sp.Name() == "app.Repair" {
			for _, e := range sp.Events() {
				settled = settled || e.Name == "settle" && otelrec.Attrs(e.Attributes)["cqlsafe.settle.outcome"].AsString() == "landed"
			}
		}
	}
	if !settled {
		t.Errorf("no settle event on the application's span")
	}
}

// TestV2OtelRefusedCounterAndBatch: a counter increment whose response is dropped is
// refused a retry (Cassandra holds it once) and its span says outcome unknown with the
// refusal counted; a logged batch through ExecBatch is one "BATCH INSERT" span with its
// size and, with WithQueryText, its statements' text but not its values; the clock
// offset of a v2 Policy 2 s behind is reported by ObserveClockOffset.
func TestV2OtelRefusedCounterAndBatch(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE c (id int PRIMARY KEY, n counter)`)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rec := otelrec.New(t)
	inst, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(rec.TP), cqlsafeotel.WithMeterProvider(rec.MP),
		cqlsafeotel.WithQueryText(true))
	if err != nil {
		t.Fatal(err)
	}
	s, px, counting := otelSession(t, ks, inst)
	p := retry.NewPolicy(retry.WithTracer(inst), retry.WithBackoff(5*time.Millisecond, 20*time.Millisecond),
		retry.WithClock(clientid.NewClockFunc(func() time.Time { return time.Now().Add(-2 * time.Second) })))

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE c")))
	err = p.Exec(context.Background(), s.Query(`UPDATE c SET n = n + 1 WHERE id = ?`, 1), retry.Operation("test.Count"))
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) || ou.Idempotent {
		t.Fatalf("err = %v, want a non-idempotent outcome-unknown error", err)
	}
	var n int64
	if err := s0.Query(`SELECT n FROM c WHERE id = 1`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("counter = %d, %v; want 1 (applied once, never re-sent)", n, err)
	}
	spans := rec.Spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans: %v", len(spans), otelrec.SpanNames(spans))
	}
	a := otelrec.Attrs(spans[0].Attributes())
	if a["cqlsafe.outcome"].AsString() != "unknown" || a["cqlsafe.idempotent"].AsBool() || a["cqlsafe.attempts"].AsInt64() != 1 ||
		a["error.type"].AsString() != "client_timeout" || len(a["cqlsafe.not_idempotent.reasons"].AsStringSlice()) == 0 ||
		spans[0].Status().Code != codes.Error {
		t.Errorf("span %v, status %v", spans[0].Attributes(), spans[0].Status())
	}
	if evs := spans[0].Events(); len(evs) != 1 || otelrec.Attrs(evs[0].Attributes)["cqlsafe.refusal.reason"].AsString() != "not_idempotent" {
		t.Errorf("events %v, want one refused attempt (not_idempotent)", evs)
	}
	if got := rec.Sum(t, "cqlsafe.refusals", attribute.String("cqlsafe.operation", "test.Count"),
		attribute.String("cqlsafe.refusal.reason", "not_idempotent"), attribute.String("error.type", "client_timeout")); got != 1 {
		t.Errorf("refusals = %d, want 1: %v", got, rec.Points(t, "cqlsafe.refusals"))
	}

	const secret = "batch-value-never-recorded"
	b := s.Batch(gocql.LoggedBatch)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, secret)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 2, secret)
	if err := p.ExecBatch(context.Background(), s, b); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s0.Query(`SELECT COUNT(*) FROM kv`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("%d rows, %v; want 2", rows, err)
	}
	spans = rec.Spans.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans: %v", len(spans), otelrec.SpanNames(spans))
	}
	sp := spans[1]
	a = otelrec.Attrs(sp.Attributes())
	if sp.Name() != "retry.ExecBatch" || a["db.operation.name"].AsString() != "BATCH INSERT" || a["db.operation.batch.size"].AsInt64() != 2 ||
		a["db.query.text"].AsString() != "INSERT INTO kv (id, v) VALUES (?, ?)\nINSERT INTO kv (id, v) VALUES (?, ?)" {
		t.Errorf("batch span %q: %v", sp.Name(), sp.Attributes())
	}
	if len(sp.Events()) != 1 || counting.batches.Load() != 1 {
		t.Errorf("batch: %d attempt events, the application's observer saw %d batches; want 1, 1", len(sp.Events()), counting.batches.Load())
	}
	otelrec.AssertNoValue(t, sp, secret)

	reg, err := inst.ObserveClockOffset(p, attribute.String("service.instance.id", "v2-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	o, err := p.MeasureClock(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	m := rec.Metric(t, "cqlsafe.clock.offset")
	if m == nil {
		t.Fatal("no cqlsafe.clock.offset after a measurement")
	}
	g := m.Data.(metricdata.Gauge[float64]).DataPoints
	if len(g) != 1 || g[0].Value < 1.9 || g[0].Value > 2.1 || g[0].Value != o.Offset.Seconds() {
		t.Errorf("cqlsafe.clock.offset %v, MeasureClock said %v; want about 2 s", g, o)
	}
}
