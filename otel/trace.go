package cqlsafeotel

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

// opTrace is one logical execution: its span, and the attempt the observers saw last,
// held until the Policy's decision about it arrives so that one event tells both. It is
// also the context the attempts run with (the span's, answering traceKey with itself),
// which saves a context.WithValue on every execution.
//
// TODO(hedges): gocql's speculative executions reach the observers like attempts but
// the retry hook does not mark them; count hedges sent and won once it does.
// TODO(settle): settle results need a hook in package settle.
type opTrace struct {
	context.Context
	in        *Instrumentation
	info      *stmtInfo // the operation, keyspace and statement, and what they imply
	span      trace.Span
	recording bool // the span is sampled: build its attributes
	start     time.Time
	timestamp int64 // the pinned write timestamp, 0 for none

	rec *recBuffers // a recording span's attribute buffers; nil if it does not record

	mu      sync.Mutex
	pending []attribute.KeyValue // the last observed attempt, not yet decided on (in rec.pending)
	failed  int                  // attempts the Policy reported as failed
	ended   bool
}

// recBuffers hold the attributes a recording span's events and end are built in: one
// allocation per sampled execution instead of one per event, and none for the rest.
// Events copy their attributes (trace.NewEventConfig); the end's are passed once.
type recBuffers struct {
	pending [10]attribute.KeyValue // an attempt event: up to 6 observed, 3 decided
	end     [4]attribute.KeyValue
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

// observed is one attempt as a gocql observer saw it.
type observed struct {
	attempt int // gocql's, 0 for the first
	host    *gocql.HostInfo
	latency time.Duration
	err     error
}

// observe records an attempt the session's observers saw. The decision about a failed
// attempt follows (Attempt) and completes its event; a successful or undecided one is
// written as it is when the next attempt or the end comes.
func (t *opTrace) observe(o observed) {
	if !t.recording {
		return
	}
	addr, hasAddr := t.in.hosts.get(o.host)
	var errType, code attribute.KeyValue
	if o.err != nil {
		errType = semconv.ErrorTypeKey.String(retry.ClassifyError(o.err).String())
		if c, ok := statusCode(o.err); ok {
			code = semconv.DBResponseStatusCode(c)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return // a speculative attempt that finished after the execution
	}
	t.flushLocked()
	attrs := append(t.rec.pending[:0], attrAttempt.Int(o.attempt+1),
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
	t.pending = attrs
}

// flushLocked writes the pending observed attempt as an event of its own. The event
// options copy the attributes (trace.NewEventConfig), so the buffer is free again.
func (t *opTrace) flushLocked() {
	if t.pending != nil {
		t.span.AddEvent(eventAttempt, trace.WithAttributes(t.pending...))
		t.pending = nil
	}
}

// Attempt records the Policy's decision about a failed attempt (retry.Trace).
func (t *opTrace) Attempt(ev retry.Event) {
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
		if t.pending != nil {
			attrs = t.pending
			t.pending = nil
		} else {
			// No observer saw it (none wired, or Do's own runs): the event says what the
			// Policy knows.
			attrs = append(t.rec.pending[:0], attrAttempt.Int(ev.Attempt), semconv.ErrorTypeKey.String(class))
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
	in.attempts.Add(t, 1, t.measure(class, "", ""))
	if ev.Retrying {
		in.retries.Add(t, 1, t.measure(class, attrDecision, decision))
	} else {
		in.refusals.Add(t, 1, t.measure(class, attrReason, reason))
	}
}

// End closes the span and records the execution's metrics (retry.Trace).
func (t *opTrace) End(err error, attempts int) {
	elapsed := time.Since(t.start)
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return
	}
	t.ended = true
	t.flushLocked()
	failed := t.failed
	t.mu.Unlock()

	class := retry.ClassifyError(err)
	outcome := outcomeOK
	if err != nil {
		outcome = outcomeFailed
		var ou *retry.OutcomeUnknownError
		if errors.As(err, &ou) {
			outcome = outcomeUnknown
		}
	}
	if t.recording {
		attrs := t.rec.end[:0]
		if t.timestamp != 0 {
			attrs = append(attrs, attrTimestamp.Int64(t.timestamp))
		}
		attrs = append(attrs, attrAttempts.Int(attempts), attrOutcome.String(outcome))
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
			in.attempts.Add(t, int64(rest), t.info.okAdd...)
		}
		in.duration.Record(t, elapsed.Seconds(), t.info.okRecord...)
		return
	}
	attrs := t.measure(class.String(), "", "")
	if rest > 0 {
		in.attempts.Add(t, int64(rest), attrs)
	}
	if outcome == outcomeUnknown {
		in.outcomeUnknown.Add(t, 1, attrs)
	}
	in.duration.Record(t, elapsed.Seconds(), attrs)
}

// measure is the attribute set of one measurement of this execution (see measureSets).
func (t *opTrace) measure(class string, extra attribute.Key, value string) metric.MeasurementOption {
	return t.in.sets.get(measureKey{operation: t.info.key.operation, keyspace: t.info.key.keyspace, dbOp: t.info.dbOp,
		class: class, extra: extra, value: value})
}
