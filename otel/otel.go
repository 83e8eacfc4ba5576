package cqlsafeotel

import (
	"context"
	"errors"

	"github.com/gocql/gocql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/internal/otelcore"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/settle"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/cqlsafe/cqlsafe/otel"

// ErrInvalidOption is the errors.Is target of every option New rejects.
var ErrInvalidOption = otelcore.ErrInvalidOption

// Option configures New. An invalid value is rejected, never replaced by a default.
type Option = otelcore.Option

// WithTracerProvider sets where spans go (default: the global provider, otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option { return otelcore.WithTracerProvider(tp) }

// WithMeterProvider sets where metrics go (default: the global provider, otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option { return otelcore.WithMeterProvider(mp) }

// WithQueryText records the CQL text as db.query.text (default off). Bound values are
// never recorded; text with literals spliced in would carry them, which is why it is
// off unless asked for.
func WithQueryText(on bool) Option { return otelcore.WithQueryText(on) }

// Instrumentation turns retry's executions into spans and metrics. It implements
// retry.Tracer: give it to retry.WithTracer; and settle.Observer: give it to
// settle.WithObserver. It is safe for concurrent use; a nil *Instrumentation records
// nothing.
type Instrumentation struct{ c *otelcore.Instrumentation }

var (
	_ retry.Tracer    = (*Instrumentation)(nil)
	_ settle.Observer = (*Instrumentation)(nil)
)

// New builds an Instrumentation. Defaults: the global tracer and meter providers
// (otel.GetTracerProvider, otel.GetMeterProvider), no db.query.text. It registers a
// callback with the meter provider that reads its cqlsafe.attempts counts at each
// collection, for the provider's life.
func New(opts ...Option) (*Instrumentation, error) {
	c, err := otelcore.New(driver, opts...)
	if err != nil {
		return nil, err
	}
	return &Instrumentation{c: c}, nil
}

// driver is what the shared instrumentation needs of gocql v1.7.
var driver = otelcore.Driver{
	Scope:    ScopeName,
	Classify: retry.ClassifyError,
	OutcomeUnknown: func(err error) bool {
		var ou *retry.OutcomeUnknownError
		return errors.As(err, &ou)
	},
	StatusCode: func(err error) (int, bool) {
		code, _, ok := cqlvalue.RequestError(err)
		return code, ok
	},
	// Not ConnectAddress: it panics on a host without a valid address.
	HostAddress: func(h any) string { return h.(*gocql.HostInfo).ConnectAddressAndPort() },
}

func (in *Instrumentation) core() *otelcore.Instrumentation {
	if in == nil {
		return nil
	}
	return in.c
}

// Begin opens the span of one logical execution (retry.Tracer). The context it returns
// carries the span, so gocql's observers (QueryObserver, BatchObserver) and spans the
// caller starts below it find it.
func (in *Instrumentation) Begin(ctx context.Context, x retry.Execution) (context.Context, retry.Trace) {
	return in.core().Begin(ctx, x)
}

// Settled records one settle.Write or settle.LWT call (settle.Observer): it counts it in
// cqlsafe.settle.results by kind, outcome and, when it failed, error.type, and adds a
// "settle" event to the span in ctx when that span records.
func (in *Instrumentation) Settled(ctx context.Context, r settle.Report) { in.core().Settled(ctx, r) }

// ObserveClockOffset reports p's last clock measurement (retry.Policy.MeasureClock) at
// each collection: cqlsafe.clock.offset, the node's clock minus this process's in
// seconds (positive: this process lags, and its writes lose to writes stamped up to
// that much earlier), and cqlsafe.clock.offset.uncertainty, within which it is known,
// both with server.address (the node that answered) and attrs (say, which service
// instance). Nothing is reported before the first measurement. Unregister the
// returned registration when p is retired.
//
// The measurement itself is the caller's to schedule (every minute or so; the example
// of MeasureClock shows one way); alert on |offset| − uncertainty above what a lost
// write may cost you, or bound it with retry.WithMaxClockOffset.
func (in *Instrumentation) ObserveClockOffset(p *retry.Policy, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if p == nil {
		return in.core().ObserveClockOffset(nil, attrs...)
	}
	return in.core().ObserveClockOffset(p, attrs...)
}

// QueryObserver returns a gocql.QueryObserver that adds each attempt of an execution
// the Instrumentation follows to its span (host, latency, error class), then calls next
// (may be nil): set cluster.QueryObserver = inst.QueryObserver(cluster.QueryObserver).
// Queries that no retry execution runs pass straight to next. Bound values are never
// read.
func (in *Instrumentation) QueryObserver(next gocql.QueryObserver) gocql.QueryObserver {
	return queryObserver{in: in.core(), next: next}
}

// BatchObserver is QueryObserver for batches: set
// cluster.BatchObserver = inst.BatchObserver(cluster.BatchObserver).
func (in *Instrumentation) BatchObserver(next gocql.BatchObserver) gocql.BatchObserver {
	return batchObserver{in: in.core(), next: next}
}

type queryObserver struct {
	in   *otelcore.Instrumentation
	next gocql.QueryObserver
}

func (o queryObserver) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	o.in.ObserveQuery(ctx, q.Statement, host(q.Host), q.Start, q.End, q.Err)
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

type batchObserver struct {
	in   *otelcore.Instrumentation
	next gocql.BatchObserver
}

func (o batchObserver) ObserveBatch(ctx context.Context, b gocql.ObservedBatch) {
	o.in.ObserveBatch(ctx, len(b.Statements), host(b.Host), b.Start, b.End, b.Err)
	if o.next != nil {
		o.next.ObserveBatch(ctx, b)
	}
}

// host is h for the shared instrumentation: nil (not a nil *HostInfo) for none.
func host(h *gocql.HostInfo) any {
	if h == nil {
		return nil
	}
	return h
}
