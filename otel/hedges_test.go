package cqlsafeotel_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cqlsafe/cqlsafe/integration/otelrec"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
	"github.com/cqlsafe/cqlsafe/retry"
)

// TestOtelHedges drives the hooks as a hedging Policy and gocql's observer do, without
// Cassandra: the Policy says how many hedges were sent and whether one won
// (retry.HedgeTrace) before the end, the observer reports each attempt. A hedge won
// when the Policy says so and the execution succeeded; then the successful attempt's
// event is marked. Sampled or not, the metrics are the same.
func TestOtelHedges(t *testing.T) {
	const (
		stmt  = "INSERT INTO kv (id, v) VALUES (?, ?)"
		delay = 10 * time.Millisecond
	)
	host := cqlvalue.Host(net.IPv4(127, 0, 0, 1), "")
	cases := []struct {
		name string
		// run plays one execution: observe reports an attempt that started at
		// timed+at; the hedge delay is timed from timed.
		run    func(tr retry.Trace, observe func(at time.Duration, err error), timed time.Time)
		sent   int64
		won    int64
		failed bool
		events []string // per attempt event: "hedge", "ok", or the error type; "…+decision" when decided
	}{
		{name: "hedge won", sent: 1, won: 1, events: []string{"canceled", "hedge"},
			run: func(tr retry.Trace, observe func(time.Duration, error), timed time.Time) {
				observe(delay+time.Millisecond, nil) // the hedge answers
				observe(0, context.Canceled)         // the first, cancelled, seen before the end
				tr.(retry.HedgeTrace).Hedged(retry.Hedges{Sent: 1, Delay: delay, Start: timed, Won: true})
				tr.End(nil, 1)
			}},
		{name: "first execution won after a hedge was sent", sent: 1, events: []string{"ok"},
			run: func(tr retry.Trace, observe func(time.Duration, error), timed time.Time) {
				observe(-time.Millisecond, nil)
				tr.(retry.HedgeTrace).Hedged(retry.Hedges{Sent: 1, Delay: delay, Start: timed})
				tr.End(nil, 1)
			}},
		{name: "a late success after a failed attempt: maybe a retry, not counted as won", sent: 1,
			events: []string{"fatal+decision", "ok"},
			run: func(tr retry.Trace, observe func(time.Duration, error), timed time.Time) {
				observe(0, errors.New("boom"))
				tr.Attempt(retry.Event{Attempt: 1, Class: retry.ClassFatal, Retrying: true, Delay: time.Millisecond})
				observe(2*delay, nil)
				tr.(retry.HedgeTrace).Hedged(retry.Hedges{Sent: 1, Delay: delay, Start: timed})
				tr.End(nil, 2)
			}},
		{name: "failed execution with two hedges", sent: 2, failed: true, events: []string{"fatal+decision"},
			run: func(tr retry.Trace, observe func(time.Duration, error), timed time.Time) {
				observe(0, errors.New("boom"))
				tr.Attempt(retry.Event{Attempt: 1, Class: retry.ClassFatal, Reason: retry.ReasonNotRetryable, Why: "fatal"})
				tr.(retry.HedgeTrace).Hedged(retry.Hedges{Sent: 2, Delay: delay, Start: timed})
				tr.End(errors.New("boom"), 1)
			}},
		{name: "not hedged", events: []string{"ok"},
			run: func(tr retry.Trace, observe func(time.Duration, error), _ time.Time) {
				observe(0, nil)
				tr.End(nil, 1)
			}},
	}
	for _, sampled := range []bool{true, false} {
		for _, tc := range cases {
			name := tc.name
			if !sampled {
				name += ", unsampled"
			}
			t.Run(name, func(t *testing.T) {
				rec := newRecorded(t)
				if !sampled {
					tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(rec.Spans))
					inst, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(tp), cqlsafeotel.WithMeterProvider(rec.MP))
					if err != nil {
						t.Fatal(err)
					}
					rec.inst = inst
				}
				obs := rec.inst.QueryObserver(nil)
				ctx, tr := rec.inst.Begin(context.Background(), retry.Execution{Operation: "test.Hedge", Keyspace: "ks",
					Statement: stmt, Timestamp: 1, Idempotent: true})
				timed := time.Now()
				observe := func(at time.Duration, err error) {
					start := timed.Add(at)
					obs.ObserveQuery(ctx, gocql.ObservedQuery{Keyspace: "ks", Statement: stmt, Host: host, Start: start,
						End: start.Add(time.Millisecond), Err: err})
				}
				tc.run(tr, observe, timed)

				op := attribute.String("cqlsafe.operation", "test.Hedge")
				if got := rec.Sum(t, "cqlsafe.hedges.sent", op); got != tc.sent {
					t.Errorf("cqlsafe.hedges.sent = %d, want %d", got, tc.sent)
				}
				if got := rec.Sum(t, "cqlsafe.hedges.won", op); got != tc.won {
					t.Errorf("cqlsafe.hedges.won = %d, want %d", got, tc.won)
				}
				if tc.failed {
					if got := rec.Sum(t, "cqlsafe.hedges.sent", op, attribute.String("error.type", "fatal")); got != tc.sent {
						t.Errorf("cqlsafe.hedges.sent{error.type=fatal} = %d, want %d", got, tc.sent)
					}
				}
				spans := rec.Spans.Ended()
				if !sampled {
					if len(spans) != 0 {
						t.Errorf("%d spans recorded unsampled", len(spans))
					}
					return
				}
				if len(spans) != 1 {
					t.Fatalf("%d spans", len(spans))
				}
				a := otelrec.Attrs(spans[0].Attributes())
				if v, ok := a["cqlsafe.hedges"]; (tc.sent > 0) != ok || ok && v.AsInt64() != tc.sent {
					t.Errorf("span cqlsafe.hedges = %v (set %v), want %d", v.AsInt64(), ok, tc.sent)
				}
				var got []string
				for _, ev := range spans[0].Events() {
					e := otelrec.Attrs(ev.Attributes)
					s := "ok"
					if et, ok := e["error.type"]; ok {
						s = et.AsString()
					}
					if e["cqlsafe.attempt.hedge"].AsBool() {
						s = "hedge"
					}
					if _, ok := e["cqlsafe.decision"]; ok {
						s += "+decision"
					}
					got = append(got, s)
				}
				if !slices.Equal(got, tc.events) {
					t.Errorf("events %v, want %v", got, tc.events)
				}
			})
		}
	}
}

// TestOtelAttemptsObservedPerSet: cqlsafe.attempts, an asynchronous counter, reads as
// a synchronous one did: a cumulative monotonic sum per attribute set, the attempts of
// successes under the success's set and failed ones under their error class; and two
// Instrumentations on one meter provider add up.
func TestOtelAttemptsObservedPerSet(t *testing.T) {
	rec := newRecorded(t)
	other, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(rec.TP), cqlsafeotel.WithMeterProvider(rec.MP))
	if err != nil {
		t.Fatal(err)
	}
	x := retry.Execution{Operation: "test.Count", Keyspace: "ks", Statement: "INSERT INTO kv (id) VALUES (?)", Timestamp: 1, Idempotent: true}
	for _, in := range []*cqlsafeotel.Instrumentation{rec.inst, other} {
		for range 3 {
			_, tr := in.Begin(context.Background(), x)
			tr.End(nil, 1)
		}
		_, tr := in.Begin(context.Background(), x)
		tr.Attempt(retry.Event{Attempt: 1, Class: retry.ClassWriteTimeout, Retrying: true})
		tr.End(nil, 2)
	}
	op := attribute.String("cqlsafe.operation", "test.Count")
	if got := rec.Sum(t, "cqlsafe.attempts", op); got != 10 {
		t.Errorf("cqlsafe.attempts = %d, want 10: %v", got, rec.Points(t, "cqlsafe.attempts"))
	}
	if got := rec.Sum(t, "cqlsafe.attempts", op, attribute.String("error.type", "write_timeout")); got != 2 {
		t.Errorf("cqlsafe.attempts{write_timeout} = %d, want 2", got)
	}
	if pts := rec.Points(t, "cqlsafe.attempts"); len(pts) != 2 {
		t.Errorf("points %v, want one per attribute set", pts)
	}
	// Read again: cumulative, as before.
	if got := rec.Sum(t, "cqlsafe.attempts", op); got != 10 {
		t.Errorf("second read: cqlsafe.attempts = %d, want 10", got)
	}
	m := rec.Metric(t, "cqlsafe.attempts")
	if m.Unit != "{attempt}" || m.Description == "" {
		t.Errorf("unit %q, description %q", m.Unit, m.Description)
	}
	assertMonotonicCumulative(t, m)
}

// assertMonotonicCumulative fails unless m is an int64 sum, monotonic, cumulative (the
// manual reader's default temporality).
func assertMonotonicCumulative(t *testing.T, m *metricdata.Metrics) {
	t.Helper()
	data, ok := m.Data.(metricdata.Sum[int64])
	if !ok || !data.IsMonotonic || data.Temporality != metricdata.CumulativeTemporality {
		t.Errorf("%s: %T monotonic %v temporality %v, want a monotonic cumulative int64 sum", m.Name, m.Data, data.IsMonotonic, data.Temporality)
	}
}
