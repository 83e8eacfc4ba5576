package otelcore

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
)

// measureKey is what a measurement's attributes are made of.
type measureKey struct {
	operation, keyspace, dbOp, class string
	extra                            attribute.Key // cqlsafe.decision or cqlsafe.refusal.reason, or none
	value                            string
}

// maxMeasureSets bounds the cache: past it (operation names or keyspaces without end)
// sets are built per measurement, as the SDK's own cardinality limit takes over.
const maxMeasureSets = 1024

// measureSets caches the attribute sets of measurements: building a set sorts and
// copies its attributes, which would cost more than the measurement itself on every
// execution. The key space is the metrics' cardinality, small by design.
type measureSets struct {
	c cowMap[measureKey, metric.MeasurementOption]
}

func (c *measureSets) get(k measureKey) metric.MeasurementOption {
	if o, ok := c.c.load(k); ok {
		return o
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, attrOperation.String(k.operation), semconv.DBSystemNameCassandra)
	if k.keyspace != "" {
		attrs = append(attrs, semconv.DBNamespace(k.keyspace))
	}
	if k.dbOp != "" {
		attrs = append(attrs, semconv.DBOperationName(k.dbOp))
	}
	// The semantic conventions set error.type only on failures.
	if k.class != decision.ClassNone.String() {
		attrs = append(attrs, semconv.ErrorTypeKey.String(k.class))
	}
	if k.extra != "" {
		attrs = append(attrs, k.extra.String(k.value))
	}
	return c.c.store(k, metric.WithAttributeSet(attribute.NewSet(attrs...)), maxMeasureSets)
}
