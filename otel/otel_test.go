package cqlsafeotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/integration/otelrec"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
)

// TestOtelDroppedResponseOneSpanTwoAttempts: the response to an INSERT is dropped after
// Cassandra applied it, the Policy retries it. One span covers the logical write, with
// two attempt events (the first a client timeout retried after a backoff, the second
// fine), both seen by the application's own observer too; its cqlsafe.timestamp is the
// WRITETIME Cassandra holds for the row — the one timestamp both attempts sent — and
// no attribute carries the bound value.
func TestOtelDroppedResponseOneSpanTwoAttempts(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rec := newRecorded(t)
	s, px, counting := instrumentedVia(t, ks, rec.inst, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithTracer(rec.inst), retry.WithBackoff(5*time.Millisecond, 20*time.Millisecond))

	const secret = "value-never-recorded-7f3a"
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	before := counting.queries.Load()
	err := p.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, secret),
		retry.Operation("test.Put"))
	if err != nil {
		t.Fatal(err)
	}
	if got := px.Stats().Dropped.Load(); got != 1 {
		t.Fatalf("proxy dropped %d responses, want 1", got)
	}

	// What Cassandra holds: one row, written at one timestamp.
	var v string
	var wt int64
	if err := s0.Query(`SELECT v, WRITETIME(v) FROM kv WHERE id = 1`).Scan(&v, &wt); err != nil {
		t.Fatal(err)
	}
	if v != secret {
		t.Fatalf("v = %q", v)
	}

	spans := rec.Spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want one for the logical write: %v", len(spans), otelrec.SpanNames(spans))
	}
	sp := spans[0]
	if sp.Name() != "test.Put" || sp.SpanKind() != trace.SpanKindClient {
		t.Errorf("span %q kind %v, want test.Put client", sp.Name(), sp.SpanKind())
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
	if _, ok := a["db.query.text"]; ok {
		t.Error("db.query.text recorded without WithQueryText")
	}
	if sp.Status().Code == codes.Error {
		t.Errorf("status %v on success", sp.Status())
	}

	evs := sp.Events()
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2 attempts: %v", len(evs), evs)
	}
	first, second := otelrec.Attrs(evs[0].Attributes), otelrec.Attrs(evs[1].Attributes)
	for i, e := range []map[attribute.Key]attribute.Value{first, second} {
		if evs[i].Name != "attempt" || e["cqlsafe.attempt"].AsInt64() != int64(i+1) {
			t.Errorf("event %d: %s attempt %v", i, evs[i].Name, e["cqlsafe.attempt"].String())
		}
		if e["server.address"].AsString() == "" || e["server.port"].AsInt64() == 0 {
			t.Errorf("event %d: no host: %v", i, evs[i].Attributes)
		}
		if _, ok := e["cqlsafe.latency_ms"]; !ok {
			t.Errorf("event %d: no latency", i)
		}
	}
	if first["error.type"].AsString() != "client_timeout" || first["cqlsafe.decision"].AsString() != "retry" {
		t.Errorf("first attempt: %v, want a client_timeout retried", evs[0].Attributes)
	}
	if first["cqlsafe.latency_ms"].AsFloat64() < 250 {
		t.Errorf("first attempt latency %v ms, want about the 300 ms timeout", first["cqlsafe.latency_ms"].AsFloat64())
	}
	if _, ok := first["cqlsafe.backoff_ms"]; !ok {
		t.Errorf("first attempt: no backoff: %v", evs[0].Attributes)
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
	if got := rec.Sum(t, "cqlsafe.attempts", op, attribute.String("error.type", "client_timeout")); got != 1 {
		t.Errorf("cqlsafe.attempts{client_timeout} = %d, want 1", got)
	}
	if got := rec.Sum(t, "cqlsafe.retries", op, attribute.String("error.type", "client_timeout"),
		attribute.String("cqlsafe.decision", "retry")); got != 1 {
		t.Errorf("cqlsafe.retries = %d, want 1: %v", got, rec.Points(t, "cqlsafe.retries"))
	}
	if got := rec.Sum(t, "cqlsafe.refusals"); got != 0 {
		t.Errorf("cqlsafe.refusals = %d, want 0", got)
	}
	if got := rec.HistogramCount(t, "cqlsafe.operation.duration", op); got != 1 {
		t.Errorf("cqlsafe.operation.duration has %d values, want 1 (per logical operation)", got)
	}
}

// TestOtelRefusedCounterRetryCounted: the response to a counter increment is dropped
// after Cassandra applied it. The Policy refuses to retry (not idempotent): the caller
// gets the outcome-unknown error, Cassandra holds the counter incremented once, the span
// says outcome unknown with status Error, and the refusal is counted with its reason
// and error class.
func TestOtelRefusedCounterRetryCounted(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE c (id int PRIMARY KEY, n counter)`)
	rec := newRecorded(t)
	s, px, _ := instrumentedVia(t, ks, rec.inst, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithTracer(rec.inst), retry.WithBackoff(5*time.Millisecond, 20*time.Millisecond))

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE c")))
	err := p.Exec(context.Background(), s.Query(`UPDATE c SET n = n + 1 WHERE id = ?`, 1), retry.Operation("test.Count"))
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) || ou.Idempotent {
		t.Fatalf("err = %v, want a non-idempotent outcome-unknown error", err)
	}
	var n int64
	if err := s0.Query(`SELECT n FROM c WHERE id = 1`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("counter = %d, want 1 (applied once, never re-sent)", n)
	}

	spans := rec.Spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans: %v", len(spans), otelrec.SpanNames(spans))
	}
	sp := spans[0]
	a := otelrec.Attrs(sp.Attributes())
	if a["cqlsafe.outcome"].AsString() != "unknown" || a["cqlsafe.idempotent"].AsBool() ||
		a["cqlsafe.attempts"].AsInt64() != 1 || a["db.operation.name"].AsString() != "UPDATE" ||
		a["error.type"].AsString() != "client_timeout" {
		t.Errorf("span attributes %v", sp.Attributes())
	}
	// The reasons quote the statement (`counter update "n = n + 1"`): without
	// WithQueryText they are not recorded, as the text is not.
	if _, ok := a["cqlsafe.not_idempotent.reasons"]; ok {
		t.Errorf("reasons recorded without WithQueryText: %v", sp.Attributes())
	}
	if sp.Status().Code != codes.Error {
		t.Errorf("status %v, want Error", sp.Status())
	}
	evs := sp.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1: %v", len(evs), evs)
	}
	e := otelrec.Attrs(evs[0].Attributes)
	if e["cqlsafe.decision"].AsString() != "refuse" || e["cqlsafe.refusal.reason"].AsString() != "not_idempotent" ||
		e["cqlsafe.why"].AsString() == "" || e["server.address"].AsString() == "" {
		t.Errorf("attempt event %v", evs[0].Attributes)
	}

	op := attribute.String("cqlsafe.operation", "test.Count")
	if got := rec.Sum(t, "cqlsafe.refusals", op, attribute.String("cqlsafe.refusal.reason", "not_idempotent"),
		attribute.String("error.type", "client_timeout"), attribute.String("db.operation.name", "UPDATE")); got != 1 {
		t.Errorf("refusals{not_idempotent, client_timeout} = %d, want 1: %v", got, rec.Points(t, "cqlsafe.refusals"))
	}
	if got := rec.Sum(t, "cqlsafe.outcome_unknown", op, attribute.String("error.type", "client_timeout")); got != 1 {
		t.Errorf("outcome_unknown = %d, want 1: %v", got, rec.Points(t, "cqlsafe.outcome_unknown"))
	}
	if got := rec.Sum(t, "cqlsafe.retries"); got != 0 {
		t.Errorf("retries = %d, want 0", got)
	}
	if got := rec.Sum(t, "cqlsafe.attempts", op); got != 1 {
		t.Errorf("attempts = %d, want 1", got)
	}
}

// TestOtelBatchQueryText: a batch through ExecBatch is one span, "BATCH INSERT" with its
// size; WithQueryText(true) records the statements' text, still without the values.
func TestOtelBatchQueryText(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rec := newRecorded(t, cqlsafeotel.WithQueryText(true))
	s, _, counting := instrumentedVia(t, ks, rec.inst, 5*time.Second)
	p := retry.NewPolicy(retry.WithTracer(rec.inst))

	const secret = "batch-value-never-recorded-91c2"
	b := s.NewBatch(gocql.UnloggedBatch)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, secret)
	b.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, secret+"2")
	if err := p.ExecBatch(context.Background(), s, b); err != nil {
		t.Fatal(err)
	}
	var wt int64
	if err := s0.Query(`SELECT WRITETIME(v) FROM kv WHERE id = 1`).Scan(&wt); err != nil {
		t.Fatal(err)
	}
	spans := rec.Spans.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans: %v", len(spans), otelrec.SpanNames(spans))
	}
	sp := spans[0]
	a := otelrec.Attrs(sp.Attributes())
	if sp.Name() != "retry.ExecBatch" || a["db.operation.name"].AsString() != "BATCH INSERT" ||
		a["db.operation.batch.size"].AsInt64() != 2 || a["cqlsafe.timestamp"].AsInt64() != wt ||
		a["cqlsafe.attempts"].AsInt64() != 1 {
		t.Errorf("span %s: %v (writetime %d)", sp.Name(), sp.Attributes(), wt)
	}
	if got := a["db.query.text"].AsString(); got != "INSERT INTO kv (id, v) VALUES (?, ?)\nINSERT INTO kv (id, v) VALUES (?, ?)" {
		t.Errorf("db.query.text = %q", got)
	}
	if len(sp.Events()) != 1 || counting.batches.Load() != 1 {
		t.Errorf("%d events, application observer saw %d batches; want 1 and 1", len(sp.Events()), counting.batches.Load())
	}
	otelrec.AssertNoValue(t, sp, secret)
}

// TestOtelDoStepsAreChildSpans: retry.Do is one span; each Exec step inside it is a
// child span of its own, and a query the function runs directly with Do's context is
// not taken for an attempt of Do.
func TestOtelDoStepsAreChildSpans(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rec := newRecorded(t)
	s, _, _ := instrumentedVia(t, ks, rec.inst, 5*time.Second)
	err := retry.Do(context.Background(), func(ctx context.Context) error {
		if err := retry.Exec(ctx, s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "a")); err != nil {
			return err
		}
		var v string
		return s.Query(`SELECT v FROM kv WHERE id = 1`).WithContext(ctx).Scan(&v)
	}, retry.WithTracer(rec.inst))
	if err != nil {
		t.Fatal(err)
	}
	spans := rec.Spans.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans: %v", len(spans), otelrec.SpanNames(spans))
	}
	step, do := spans[0], spans[1]
	if do.Name() != "retry.Do" || step.Name() != "retry.Exec" {
		t.Fatalf("spans %v", otelrec.SpanNames(spans))
	}
	if step.Parent().SpanID() != do.SpanContext().SpanID() {
		t.Errorf("the step's parent is %v, want the Do span %v", step.Parent().SpanID(), do.SpanContext().SpanID())
	}
	if len(do.Events()) != 0 || len(step.Events()) != 1 {
		t.Errorf("events: Do %d (want 0), step %d (want 1)", len(do.Events()), len(step.Events()))
	}
	if got := otelrec.Attrs(do.Attributes())["cqlsafe.attempts"].AsInt64(); got != 1 {
		t.Errorf("Do attempts = %d", got)
	}
}

// TestOtelHedgeWinsDroppedResponse: a hedged write (retry.WithHedging, on a session
// whose hosts are picked through retry.HedgingHosts) whose first response the proxy
// drops after Cassandra applied it. The hedge, sent to the same node after the hedge
// delay (the ceiling, 100 ms, until the Policy has seen enough executions), answers
// long before the client timeout. The span and the metrics say one hedge sent and
// won, with no failed attempt; the winning attempt's event is marked a hedge; and
// Cassandra holds the row once, with the pinned WRITETIME.
func TestOtelHedgeWinsDroppedResponse(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rec := newRecorded(t)
	s, px, _ := instrumentedVia(t, ks, rec.inst, 5*time.Second, func(cl *gocql.ClusterConfig) {
		cl.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.RoundRobinHostPolicy())
	})
	p := retry.NewPolicy(retry.WithTracer(rec.inst), retry.WithHedging(retry.HedgeDelayBounds(20*time.Millisecond, 100*time.Millisecond)))
	ctx := context.Background()
	const ins = `INSERT INTO kv (id, v) VALUES (?, ?)`
	// Prepared first, so that the EXECUTE the proxy drops is the first execution's.
	if err := p.Exec(ctx, s.Query(ins, 0, "warm"), retry.Operation("test.Warm")); err != nil {
		t.Fatal(err)
	}

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	start := time.Now()
	if err := p.Exec(ctx, s.Query(ins, 1, "hedged"), retry.Operation("test.Hedged")); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if got := px.Stats().Dropped.Load(); got != 1 {
		t.Fatalf("proxy dropped %d responses, want 1", got)
	}
	if took >= 5*time.Second {
		t.Fatalf("the write took %v: the client timeout, not a hedge, ended it", took)
	}

	var rows int
	if err := s0.Query(`SELECT COUNT(*) FROM kv WHERE id = 1`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	var wt int64
	if err := s0.Query(`SELECT WRITETIME(v) FROM kv WHERE id = 1`).Scan(&wt); err != nil {
		t.Fatal(err)
	}

	var sp sdktrace.ReadOnlySpan
	for _, x := range rec.Spans.Ended() {
		if x.Name() == "test.Hedged" {
			sp = x
		}
	}
	if sp == nil {
		t.Fatalf("no test.Hedged span: %v", otelrec.SpanNames(rec.Spans.Ended()))
	}
	a := otelrec.Attrs(sp.Attributes())
	if rows != 1 || wt != a["cqlsafe.timestamp"].AsInt64() {
		t.Errorf("%d rows, WRITETIME %d; want 1 row at the pinned %d", rows, wt, a["cqlsafe.timestamp"].AsInt64())
	}
	if a["cqlsafe.hedges"].AsInt64() != 1 || a["cqlsafe.outcome"].AsString() != "ok" || a["cqlsafe.attempts"].AsInt64() != 1 {
		t.Errorf("span attributes %v, want one hedge, ok, one attempt", sp.Attributes())
	}
	var marked int
	for _, ev := range sp.Events() {
		e := otelrec.Attrs(ev.Attributes)
		if _, ok := e["cqlsafe.decision"]; ok {
			t.Errorf("an attempt was decided on: %v", ev.Attributes)
		}
		if e["cqlsafe.attempt.hedge"].AsBool() {
			marked++
			if _, ok := e["error.type"]; ok {
				t.Errorf("the hedge's attempt failed: %v", ev.Attributes)
			}
		}
	}
	if marked != 1 {
		t.Errorf("%d attempt events marked a hedge, want 1: %v", marked, sp.Events())
	}

	op := attribute.String("cqlsafe.operation", "test.Hedged")
	if got := rec.Sum(t, "cqlsafe.hedges.sent", op); got < 1 {
		t.Errorf("cqlsafe.hedges.sent = %d, want ≥ 1: %v", got, rec.Points(t, "cqlsafe.hedges.sent"))
	}
	if got := rec.Sum(t, "cqlsafe.hedges.won", op); got != 1 {
		t.Errorf("cqlsafe.hedges.won = %d, want 1: %v", got, rec.Points(t, "cqlsafe.hedges.won"))
	}
	if got := rec.Sum(t, "cqlsafe.hedges.sent", attribute.String("cqlsafe.operation", "test.Warm")); got != 0 {
		t.Errorf("the warm-up write sent %d hedges", got)
	}
	if got := rec.Sum(t, "cqlsafe.retries"); got != 0 {
		t.Errorf("cqlsafe.retries = %d, want 0", got)
	}
}

// TestOtelSettleLanded: a write whose response was dropped comes back as an unknown
// outcome (one attempt allowed); settle.Write, given the Instrumentation as its
// observer and the application's span, finds it landed: cqlsafe.settle.results counts
// one landed write and the span has the settle event.
func TestOtelSettleLanded(t *testing.T) {
	s0, ks := node.Keyspace(t)
	harness.Exec(t, s0, `CREATE TABLE kv (id int PRIMARY KEY, v text)`)
	rec := newRecorded(t)
	s, px, _ := instrumentedVia(t, ks, rec.inst, 300*time.Millisecond)
	p := retry.NewPolicy(retry.WithTracer(rec.inst), retry.WithMaxAttempts(1))

	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	err := p.Exec(context.Background(), s.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, 1, "x"))
	var ou *retry.OutcomeUnknownError
	if !errors.As(err, &ou) {
		t.Fatalf("err = %v, want an unknown outcome", err)
	}
	ctx, span := rec.TP.Tracer("app").Start(context.Background(), "app.Repair")
	res, err := settle.Write(ctx, s0, ou, settle.WithObserver(rec.inst))
	span.End()
	if err != nil || res.Outcome != settle.Landed {
		t.Fatalf("settled %v, %v; want landed", res.Outcome, err)
	}
	if got := rec.Sum(t, "cqlsafe.settle.results", attribute.String("cqlsafe.settle.kind", "write"),
		attribute.String("cqlsafe.settle.outcome", "landed")); got != 1 {
		t.Errorf("cqlsafe.settle.results{write, landed} = %d, want 1: %v", got, rec.Points(t, "cqlsafe.settle.results"))
	}
	var found bool
	for _, x := range rec.Spans.Ended() {
		if x.Name() != "app.Repair" {
			continue
		}
		for _, ev := range x.Events() {
			e := otelrec.Attrs(ev.Attributes)
			found = found || ev.Name == "settle" && e["cqlsafe.settle.outcome"].AsString() == "landed" && e["cqlsafe.settle.statements"].AsInt64() == 1
		}
	}
	if !found {
		t.Errorf("no settle event on the application's span: %v", otelrec.SpanNames(rec.Spans.Ended()))
	}
}
