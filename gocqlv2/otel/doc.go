// Package cqlsafeotel reports what package retry does on the Apache Cassandra Go driver
// v2 (github.com/apache/cassandra-gocql-driver/v2) as OpenTelemetry traces and metrics:
// each logical write or read with its attempts, the pinned write timestamp, the verdict
// that allowed or refused a retry, whether the outcome stayed unknown, and settle's
// results.
//
// It is github.com/cqlsafe/cqlsafe/otel for the v2 driver: the same spans, events,
// attributes and metrics (one implementation serves both), the same API with the v2
// driver's types, and its own module, so an application on v2 downloads neither gocql
// v1.7 nor the OpenTelemetry SDK unless it imports this. Its instrumentation scope is
// github.com/cqlsafe/cqlsafe/gocqlv2/otel. Wire it as that package's documentation
// shows, with this module's retry and settle:
//
//	inst, err := cqlsafeotel.New() // the global providers, or WithTracerProvider / WithMeterProvider
//	cluster.QueryObserver = inst.QueryObserver(cluster.QueryObserver)
//	cluster.BatchObserver = inst.BatchObserver(cluster.BatchObserver)
//	policy := retry.NewPolicy(retry.WithTracer(inst))
//	res, err := settle.Write(ctx, session, unknown, settle.WithObserver(inst))
//
// The v2 driver calls the observers with the context given to ExecContext (and to
// IterContext), which is how an attempt finds its execution's span; the Policy runs
// statements that way.
package cqlsafeotel
