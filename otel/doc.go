// Package cqlsafeotel reports what package retry does — each logical write or read with
// its attempts, the pinned write timestamp, the verdict that allowed or refused a
// retry, and whether the outcome stayed unknown — as OpenTelemetry traces and metrics.
//
// It is its own module (github.com/cqlsafe/cqlsafe/otel) so the core module keeps its
// small dependency list; its package name, cqlsafeotel, keeps it apart from
// go.opentelemetry.io/otel in the same file.
//
// Wire it in two places: the retry Policy (retry.WithTracer) opens one span per logical
// execution, and the session's gocql observers (QueryObserver, BatchObserver, which
// chain with any the cluster already has) add each attempt's host and latency to it:
//
//	inst, err := cqlsafeotel.New() // the global providers, or WithTracerProvider / WithMeterProvider
//	cluster.QueryObserver = inst.QueryObserver(cluster.QueryObserver)
//	cluster.BatchObserver = inst.BatchObserver(cluster.BatchObserver)
//	policy := retry.NewPolicy(retry.WithTracer(inst))
//
// # Traces
//
// One span of kind client per logical execution, named by the execution's operation
// ("retry.Exec", "retry.ExecBatch", "retry.Do", or what the caller passed with
// retry.Operation, such as "overwrite.Row"), with the database semantic conventions:
// db.system.name "cassandra", db.namespace (the keyspace), db.operation.name (SELECT,
// INSERT, UPDATE, DELETE, BATCH, TRUNCATE, read from the statement), db.query.text
// only with WithQueryText(true); bound values never. cqlsafe.timestamp is the pinned
// write timestamp every attempt sent, cqlsafe.idempotent the verdict, cqlsafe.attempts
// the attempts made, cqlsafe.outcome "ok", "failed" or "unknown" (an
// *retry.OutcomeUnknownError: the write may or may not have applied). A failed
// execution has status Error and error.type, the retry error class.
//
// Each attempt is a span event named "attempt": cqlsafe.attempt (1 for the first),
// server.address and server.port, cqlsafe.latency_ms, error.type and
// db.response.status_code when it failed (from the observers), and after a failure the
// decision (from the Policy): cqlsafe.decision "retry", "next_host" or "refuse", with
// cqlsafe.backoff_ms before a retry, cqlsafe.refusal.reason and cqlsafe.why for a
// refusal. retry.Do's span holds one event per run of its function; each Exec step
// inside it is a child span of its own.
//
// # Metrics
//
// All carry cqlsafe.operation, db.system.name, db.namespace, db.operation.name and,
// for failures, error.type (the retry error class, a dozen values):
//
//	cqlsafe.attempts            counter   attempts sent
//	cqlsafe.retries             counter   failed attempts sent again (+ cqlsafe.decision)
//	cqlsafe.refusals            counter   failed attempts not retried (+ cqlsafe.refusal.reason)
//	cqlsafe.outcome_unknown     counter   executions that ended with an unknown outcome
//	cqlsafe.operation.duration  histogram seconds per logical execution, retries and backoff included
//
// Refusal reasons are a fixed set: context_done, not_retryable, batch_logged,
// not_idempotent, attempts_exhausted.
//
// Hedged (speculative) attempts and settle results are not reported yet: the retry
// hook does not tell them apart (see the TODOs in trace.go).
package cqlsafeotel
