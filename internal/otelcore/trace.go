package otelcore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// opTrace is one logical execution: its span, and the attempt the observers saw last,
// held until the Policy's decision about it arrives so that one event tells both. It is
// also the context the attempts run with (the span's, answering traceKey with itself),
// which saves a context.WithValue on every execution.
//
// Hedges (retry.WithHedging) reach the observers like attempts; the Policy tells how
// many were sent and whether one won (Hedged, retry.HedgeTrace); the successful
// attempt the observers saw is then marked as the hedge's.
type opTrace struct {
	context.Context
	in        *Instrumentation
	info      *stmtInfo // the operation, keyspace and statement, and what they imply
	span      trace.Span
	recording bool // the span is sampled: build its attributes
	start     time.Time
	timestamp int64 // the pinned write timestamp, 0 for none

	rec *recBuffers // a recording span's attribute buffers; nil if it does not record

	// okAt is when the first successful attempt the observers saw started, as 1 + ns
	// after start; 0 for none yet.
	okAt atomic.Int64

	observedN  atomic.Int64 // attempts observed so far: the next one's cqlsafe.attempt
	batchSized atomic.Bool  // db.operation.batch.size is set

	mu      sync.Mutex
	pending []attribute.KeyValue // the last observed attempt, not yet decided on (in rec.pending)
	failed  int                  // attempts the Policy reported as failed
	hedges  *engine.Hedges       // hedges sent (Hedged), nil for none
	ended   bool
}

// recBuffers hold the attributes a recording span's events and end are built in: one
// allocation per sampled execution instead of one per event, and none for the rest.
// Events copy their attributes (trace.NewEventConfig), so the buffer is free again
// once an event is added; the end's attributes are built in it too, once the last
// event is out.
type recBuffers struct {
	pending   [10]attribute.KeyValue // an attempt event: up to 6 observed, 1 hedge, 3 decided
	pendingAt int64                  // the pending attempt's start, as okAt; 0 if it failed
}

// traceKey finds an execution's opTrace in the context its attempts run with.
type traceKey struct{}

// Value answers traceKey with t; everything else, the span included, comes from the
// span's context.
func (t *opTrace) Value(key any) any {
	if key == (traceKey{}) {
		return t
	}
	return t.Context.Value(key)
}

// observed is one attempt as a driver's observer saw it.
type observed struct {
	host    any // the driver's host, nil for none
	start   time.Time
	latency time.Duration
	err     error
}

// observe records an attempt the session's observers saw. The decision about a failed
// attempt follows (Attempt) and completes its event; a successful or undecided one is
// written as it is when the next attempt or the end comes.
func (t *opTrace) observe(o observed) {
	attempt := t.observedN.Add(1)
	var at int64
	if o.err == nil {
		// The first success seen is the one whose event is marked as the winning
		// hedge's when the Policy says a hedge won.
		at = max(int64(o.start.Sub(t.start)), 0) + 1
		t.okAt.CompareAndSwap(0, at)
	}
	if !t.recording {
		return
	}
	addr, hasAddr := t.in.hosts.get(o.host, t.in.driver.HostAddress)
	var errType, code attribute.KeyValue
	if o.err != nil {
		errType = semconv.ErrorTypeKey.String(t.in.driver.Classify(o.err).String())
		if c, ok := t.in.statusCode(o.err); ok {
			code = semconv.DBResponseStatusCode(c)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return // a speculative attempt that finished after the execution
	}
	// A pending success is the execution's answer: an attempt seen after it is one of a
	// concurrent execution that lost (the first one a hedge overtook, cancelled, or
	// another hedge). It gets an event of its own at once; the success stays pending
	// for End, which marks it when it was a hedge's.
	lone := t.pending != nil && t.rec.pendingAt != 0
	var attrs []attribute.KeyValue
	if lone {
		attrs = make([]attribute.KeyValue, 0, 6)
	} else {
		t.flushLocked()
		attrs = t.rec.pending[:0]
	}
	attrs = append(attrs, attrAttempt.Int64(attempt),
		attrLatency.Float64(float64(o.latency)/float64(time.Millisecond)))
	if hasAddr {
		attrs = append(attrs, addr[:]...)
	}
	if errType.Valid() {
		attrs = append(attrs, errType)
	}
	if code.Valid() {
		attrs = append(attrs, code)
	}
	if lone {
		t.span.AddEvent(eventAttempt, trace.WithAttributes(attrs...))
		return
	}
	t.pending = attrs
	t.rec.pendingAt = at
}

// flushLocked writes the pending observed attempt as an event of its own. The event
// options copy the attributes (trace.NewEventConfig), so the buffer is free again.
func (t *opTrace) flushLocked() {
	if t.pending != nil {
		t.span.AddEvent(eventAttempt, trace.WithAttributes(t.pending...))
		t.pending = nil
	}
}

// Attempt records the Policy's decision about a failed attempt (engine.Trace).
func (t *opTrace) Attempt(ev engine.Event) {
	class := ev.Class.String()
	var attrs []attribute.KeyValue
	var decision, reason string
	if ev.Retrying {
		decision = nextStep(ev)
	} else {
		decision, reason = decisionRefuse, refusalReason(ev)
	}
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return
	}
	t.failed++
	if t.recording { // else metrics only
		switch {
		case t.pending != nil && t.rec.pendingAt == 0: // the failed attempt seen last
			attrs = t.pending
			t.pending = nil
		case t.pending == nil:
			// No observer saw it (none wired, or Do's own runs): the event says what the
			// Policy knows.
			attrs = append(t.rec.pending[:0], attrAttempt.Int(ev.Attempt), semconv.ErrorTypeKey.String(class))
		default:
			// A success is pending: the failed attempt was a losing concurrent one's, its
			// event out already (observe); this one says what the Policy knows.
			attrs = append(make([]attribute.KeyValue, 0, 5), attrAttempt.Int(ev.Attempt), semconv.ErrorTypeKey.String(class))
		}
		attrs = append(attrs, attrDecision.String(decision))
		if ev.Retrying {
			attrs = append(attrs, attrBackoff.Float64(float64(ev.Delay)/float64(time.Millisecond)))
		} else {
			attrs = append(attrs, attrReason.String(reason), attrWhy.String(ev.Why))
		}
		t.span.AddEvent(eventAttempt, trace.WithAttributes(attrs...))
	}
	t.mu.Unlock()

	in := t.in
	in.attempts.get(t.measureKey(class, "", "")).Add(1)
	if ev.Retrying {
		in.retries.Add(t, 1, t.measure(class, attrDecision, decision))
	} else {
		in.refusals.Add(t, 1, t.measure(class, attrReason, reason))
	}
}

// Hedged records the hedges gocql sent for the execution (retry.HedgeTrace), before
// End.
func (t *opTrace) Hedged(h engine.Hedges) {
	if h.Sent <= 0 {
		return
	}
	t.mu.Lock()
	if !t.ended {
		t.hedges = &h
	}
	t.mu.Unlock()
}

// hedgeWonLocked says whether a hedge answered the execution: it succeeded and the
// Policy says a hedge answered first (engine.Hedges.Won). t.mu held.
func (t *opTrace) hedgeWonLocked(err error) bool {
	return t.hedges != nil && err == nil && t.hedges.Won
}

// End closes the span and records the execution's metrics (engine.Trace).
func (t *opTrace) End(err error, attempts int) {
	elapsed := time.Since(t.start)
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return
	}
	t.ended = true
	hedges, won := t.hedges, t.hedgeWonLocked(err)
	if won && t.pending != nil && t.rec.pendingAt == t.okAt.Load() {
		t.pending = append(t.pending, attrHedge.Bool(true)) // the winning hedge's event
	}
	t.flushLocked()
	failed := t.failed
	t.mu.Unlock()

	class := t.in.driver.Classify(err)
	outcome := outcomeOK
	if err != nil {
		outcome = outcomeFailed
		if t.in.driver.OutcomeUnknown(err) {
			outcome = outcomeUnknown
		}
	}
	if t.recording {
		attrs := t.rec.pending[:0] // free: the last event is out, and no other comes (ended)
		if t.timestamp != 0 {
			attrs = append(attrs, attrTimestamp.Int64(t.timestamp))
		}
		attrs = append(attrs, attrAttempts.Int(attempts), attrOutcome.String(outcome))
		if hedges != nil {
			attrs = append(attrs, attrHedges.Int(hedges.Sent))
		}
		if err != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(class.String()))
		}
		t.span.SetAttributes(attrs...)
		if err != nil {
			t.span.SetStatus(codes.Error, err.Error())
		}
	}
	t.span.End()

	in := t.in
	// Attempts the Policy did not report as failed: the successful last one, or a last
	// one gocql gave up on without asking (a context that ended).
	rest := attempts - failed
	if err == nil {
		if rest > 0 {
			t.info.okAttempts.Add(int64(rest))
		}
		if hedges != nil {
			in.hedgesSent.Add(t, int64(hedges.Sent), t.info.okAdd...)
			if won {
				in.hedgesWon.Add(t, 1, t.info.okAdd...)
			}
		}
		in.duration.Record(t, elapsed.Seconds(), t.info.okRecord...)
		return
	}
	key := t.measureKey(class.String(), "", "")
	attrs := in.sets.get(key)
	if rest > 0 {
		in.attempts.get(key).Add(int64(rest))
	}
	if hedges != nil {
		in.hedgesSent.Add(t, int64(hedges.Sent), attrs)
	}
	if outcome == outcomeUnknown {
		in.outcomeUnknown.Add(t, 1, attrs)
	}
	in.duration.Record(t, elapsed.Seconds(), attrs)
}

// measure is the attribute set of one measurement of this execution (see measureSets).
func (t *opTrace) measure(class string, extra attribute.Key, value string) metric.MeasurementOption {
	return t.in.sets.get(t.measureKey(class, extra, value))
}

func (t *opTrace) measureKey(class string, extra attribute.Key, value string) measureKey {
	return measureKey{operation: t.info.key.operation, keyspace: t.info.key.keyspace, dbOp: t.info.dbOp,
		class: class, extra: extra, value: value}
}
