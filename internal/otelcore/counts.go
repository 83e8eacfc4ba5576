package otelcore

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// attemptCounts are the values of cqlsafe.attempts, one atomic counter per attribute
// set. The counter is asynchronous (observable): every execution adds to it, and an
// atomic add costs a fraction of a synchronous measurement, which has the SDK
// normalise the attribute set and look it up on every call. The values read at each
// collection are the totals a synchronous counter would report, per attribute set;
// what differs is that no exemplar links an attempt to its trace, and that a reader
// with delta temporality gets a zero point for a set with no attempt since the last
// collection, where a synchronous counter's has none.
type attemptCounts struct {
	sets     *measureSets // the attribute sets, shared with the synchronous instruments
	c        cowMap[measureKey, *attemptCount]
	overflow attemptCount // past maxMeasureSets attribute sets, as the SDK's cardinality limit does
}

// attemptCount is one attribute set's count.
type attemptCount struct {
	atomic.Int64
	set metric.ObserveOption
}

// overflowSet is the attribute set the SDK reports measurements past its cardinality
// limit under.
var overflowSet = metric.WithAttributeSet(attribute.NewSet(attribute.Bool("otel.metric.overflow", true)))

// get is k's counter, created on first use; the overflow counter once maxMeasureSets
// attribute sets are counted.
func (a *attemptCounts) get(k measureKey) *atomic.Int64 {
	if c, ok := a.c.load(k); ok {
		return &c.Int64
	}
	a.c.store(k, &attemptCount{set: a.sets.get(k)}, maxMeasureSets)
	if c, ok := a.c.load(k); ok {
		return &c.Int64
	}
	return &a.overflow.Int64
}

// observe reports every count to o for inst (a metric.Callback).
func (a *attemptCounts) observe(inst metric.Int64Observable) metric.Callback {
	return func(_ context.Context, o metric.Observer) error {
		if m := a.c.m.Load(); m != nil {
			for _, c := range *m {
				if n := c.Load(); n > 0 { // a set is reported once counted, as a synchronous counter's
					o.ObserveInt64(inst, n, c.set)
				}
			}
		}
		if n := a.overflow.Load(); n > 0 {
			o.ObserveInt64(inst, n, overflowSet)
		}
		return nil
	}
}
