package cqlsafeotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/cqlsafe/cqlsafe/retry"
)

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
	if in == nil || p == nil {
		return nil, errors.New("cqlsafeotel: ObserveClockOffset needs an Instrumentation and a Policy")
	}
	base := append([]attribute.KeyValue(nil), attrs...)
	return in.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		m, ok := p.ClockOffset()
		if !ok {
			return nil
		}
		set := metric.WithAttributes(append(base, attribute.String("server.address", m.Host))...)
		o.ObserveFloat64(in.clockOffset, m.Offset.Seconds(), set)
		o.ObserveFloat64(in.clockUncert, m.Uncertainty.Seconds(), set)
		return nil
	}, in.clockOffset, in.clockUncert)
}
