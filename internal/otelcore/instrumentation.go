package otelcore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
	settle "github.com/cqlsafe/cqlsafe/internal/core/settle"
)

// Driver is what an Instrumentation needs of a driver adapter.
type Driver struct {
	// Scope is the instrumentation scope of the tracer and meter (the adapter's
	// import path).
	Scope string
	// Classify is the driver's retry.ClassifyError.
	Classify func(error) decision.ErrorClass
	// OutcomeUnknown says whether err holds the driver's *retry.OutcomeUnknownError
	// (errors.As: an error that only wraps retry.ErrOutcomeUnknown is a failure).
	OutcomeUnknown func(error) bool
	// StatusCode is the protocol error code of a server error (the driver's
	// RequestError), ok false for any other error.
	StatusCode func(error) (code int, ok bool)
	// HostAddress is a host's "address:port", of the driver's host as its observers
	// report it (never nil).
	HostAddress func(host any) string
}

// ErrInvalidOption is the errors.Is target of every option New rejects.
var ErrInvalidOption = errors.New("cqlsafeotel: invalid option")

// Option configures New. An invalid value is rejected, never replaced by a default.
type Option func(*config) error

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	queryText      bool
}

// defaults are documented on New.
func defaults() config {
	return config{
		tracerProvider: otel.GetTracerProvider(),
		meterProvider:  otel.GetMeterProvider(),
	}
}

// WithTracerProvider sets where spans go (default: the global provider, otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) error {
		if tp == nil {
			return fmt.Errorf("%w: nil tracer provider", ErrInvalidOption)
		}
		c.tracerProvider = tp
		return nil
	}
}

// WithMeterProvider sets where metrics go (default: the global provider, otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: nil meter provider", ErrInvalidOption)
		}
		c.meterProvider = mp
		return nil
	}
}

// WithQueryText records the CQL text as db.query.text (default off). Bound values are
// never recorded; text with literals spliced in would carry them, which is why it is
// off unless asked for.
func WithQueryText(on bool) Option {
	return func(c *config) error { c.queryText = on; return nil }
}

// Instrumentation turns retry's executions into spans and metrics. It implements
// engine.Tracer: give it to retry.WithTracer; and settle.Observer: give it to
// settle.WithObserver. It is safe for concurrent use; a nil *Instrumentation records
// nothing.
type Instrumentation struct {
	driver    Driver
	tracer    trace.Tracer
	queryText bool
	spanKind  trace.SpanStartOption // built once: options box their values
	sets      measureSets
	stmts     cowMap[stmtKey, *stmtInfo]
	hosts     hostAttrs
	settles   cowMap[settleKey, metric.MeasurementOption]

	attempts       attemptCounts // cqlsafe.attempts, observed at collection
	retries        metric.Int64Counter
	refusals       metric.Int64Counter
	outcomeUnknown metric.Int64Counter
	hedgesSent     metric.Int64Counter
	hedgesWon      metric.Int64Counter
	settleResults  metric.Int64Counter
	duration       metric.Float64Histogram

	meter       metric.Meter                  // for ObserveClockOffset's callbacks
	clockOffset metric.Float64ObservableGauge // cqlsafe.clock.offset
	clockUncert metric.Float64ObservableGauge // cqlsafe.clock.offset.uncertainty
}

var (
	_ engine.Tracer   = (*Instrumentation)(nil)
	_ settle.Observer = (*Instrumentation)(nil)
)

// New builds an Instrumentation. Defaults: the global tracer and meter providers
// (otel.GetTracerProvider, otel.GetMeterProvider), no db.query.text. It registers a
// callback with the meter provider that reads its cqlsafe.attempts counts at each
// collection, for the provider's life.
func New(d Driver, opts ...Option) (*Instrumentation, error) {
	if d.Scope == "" || d.Classify == nil || d.OutcomeUnknown == nil || d.StatusCode == nil || d.HostAddress == nil {
		return nil, errors.New("cqlsafeotel: incomplete driver")
	}
	c := defaults()
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	in := &Instrumentation{
		driver:    d,
		tracer:    c.tracerProvider.Tracer(d.Scope, trace.WithSchemaURL(semconv.SchemaURL)),
		queryText: c.queryText,
		spanKind:  trace.WithSpanKind(trace.SpanKindClient),
	}
	m := c.meterProvider.Meter(d.Scope, metric.WithSchemaURL(semconv.SchemaURL))
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		ctr, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return ctr
	}
	in.attempts.sets = &in.sets
	attempts, err := m.Int64ObservableCounter("cqlsafe.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts sent to Cassandra by logical executions."))
	errs = append(errs, err)
	if err == nil {
		// Not metric.WithInt64Callback: of instruments created again with the same name
		// (two Instrumentations on one provider), the SDK keeps only the first callbacks.
		_, err = m.RegisterCallback(in.attempts.observe(attempts), attempts)
		errs = append(errs, err)
	}
	in.retries = counter("cqlsafe.retries", "{attempt}", "Failed attempts that were sent again.")
	in.refusals = counter("cqlsafe.refusals", "{attempt}", "Failed attempts that were not retried, by reason.")
	in.outcomeUnknown = counter("cqlsafe.outcome_unknown", "{execution}", "Writes that may or may not have applied.")
	in.hedgesSent = counter("cqlsafe.hedges.sent", "{attempt}", "Hedges (speculative executions) sent.")
	in.hedgesWon = counter("cqlsafe.hedges.won", "{execution}", "Executions a hedge answered before the first execution.")
	in.settleResults = counter("cqlsafe.settle.results", "{call}", "Calls of settle.Write and settle.LWT, by outcome.")
	in.duration, err = m.Float64Histogram("cqlsafe.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of logical executions, retries and backoff included."),
		// The boundaries the database semantic conventions recommend for operation durations.
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10))
	errs = append(errs, err)
	in.meter = m
	in.clockOffset, err = m.Float64ObservableGauge("cqlsafe.clock.offset", metric.WithUnit("s"),
		metric.WithDescription("The Cassandra node's clock minus the application's (positive: the application lags), as retry.Policy.MeasureClock last measured it."))
	errs = append(errs, err)
	in.clockUncert, err = m.Float64ObservableGauge("cqlsafe.clock.offset.uncertainty", metric.WithUnit("s"),
		metric.WithDescription("Half the round trip of that measurement: the offset is known to within this."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("cqlsafeotel: create instruments: %w", err)
	}
	return in, nil
}

// Begin opens the span of one logical execution (engine.Tracer). The context it returns
// carries the span, so gocql's observers (QueryObserver, BatchObserver) and spans the
// caller starts below it find it.
func (in *Instrumentation) Begin(ctx context.Context, x engine.Execution) (context.Context, engine.Trace) {
	if in == nil {
		return ctx, nil
	}
	info := in.statement(x)
	// The write timestamp, the one attribute that changes with every execution, is set
	// when the span ends (and only if it records): the start options stay shared.
	ctx, span := in.tracer.Start(ctx, x.Operation, info.start...)
	t := &opTrace{Context: ctx, in: in, info: info, span: span, recording: span.IsRecording(), start: time.Now(),
		timestamp: x.Timestamp}
	if t.recording {
		t.rec = new(recBuffers)
	}
	return t, t
}
