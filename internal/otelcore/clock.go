package otelcore

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// ClockSource is what ObserveClockOffset reads: a retry Policy of either driver.
type ClockSource interface {
	ClockOffset() (engine.ClockOffset, bool)
}

// ObserveClockOffset reports p's last clock measurement at each collection (the
// adapters' ObserveClockOffset documents it).
func (in *Instrumentation) ObserveClockOffset(p ClockSource, attrs ...attribute.KeyValue) (metric.Registration, error) {
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
