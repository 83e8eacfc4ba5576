// Package cqlsafeotel reports what package retry does — each logical write or read with
// its attempts, the pinned write timestamp, the verdict that allowed or refused a
// retry, and whether the outcome stayed unknown — as OpenTelemetry traces and metrics.
//
// It is its own module (github.com/cqlsafe/cqlsafe/otel) so the core module keeps its
// small dependency list; its package name, cqlsafeotel, keeps it apart from
// go.opentelemetry.io/otel in the same file. For the Apache Cassandra Go driver v2 the
// same API is github.com/cqlsafe/cqlsafe/gocqlv2/otel (one implementation serves both).
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
// and, for settle results, give it to settle.Write and settle.LWT:
//
//	res, err := settle.Write(ctx, session, unknown, settle.WithObserver(inst))
//
// # Traces
//
// One span of kind client per logical execution, named by the execution's operation
// ("retry.Exec", "retry.ExecBatch", "retry.Do", or what the caller passed with
// retry.Operation, such as "overwrite.Row"), with the database semantic conventions:
// db.system.name "cassandra", db.namespace (the keyspace), db.operation.name (SELECT,
// INSERT, UPDATE, DELETE, BATCH, TRUNCATE, read from the statement), db.query.text
// only with WithQueryText(true); bound values never. cqlsafe.not_idempotent.reasons,
// the verdict's reasons, also only with WithQueryText(true): they quote the clauses they
// are about, literals included. cqlsafe.timestamp is the pinned
// write timestamp every attempt sent, cqlsafe.idempotent the verdict, cqlsafe.attempts
// the attempts made, cqlsafe.outcome "ok", "failed" or "unknown" (an
// *retry.OutcomeUnknownError: the write may or may not have applied), cqlsafe.hedges
// the hedges sent when there were any (retry.WithHedging). A failed execution has
// status Error and error.type, the retry error class.
//
// Each attempt is a span event named "attempt": cqlsafe.attempt (1 for the first, in
// the order the observers report attempts, a hedge's included, whatever the driver's own count),
// server.address and server.port, cqlsafe.latency_ms, error.type and
// db.response.status_code when it failed (from the observers), and after a failure the
// decision (from the Policy): cqlsafe.decision "retry", "next_host" or "refuse", with
// cqlsafe.backoff_ms before a retry, cqlsafe.refusal.reason and cqlsafe.why for a
// refusal. The successful attempt of a hedge that won is marked
// cqlsafe.attempt.hedge true; a hedge's failed attempts are not told apart from
// retries. retry.Do's span holds one event per run of its function; each Exec step
// inside it is a child span of its own.
//
// A settle call with the Instrumentation as its observer adds an event named "settle"
// to the span in its context, if that span records: cqlsafe.settle.kind ("write" or
// "lwt"), cqlsafe.settle.outcome (settle's name of the outcome: "landed", "applied",
// …), cqlsafe.settle.statements, cqlsafe.settle.elapsed_ms, and error.type when it
// failed.
//
// # Metrics
//
// All carry cqlsafe.operation, db.system.name, db.namespace and db.operation.name (when
// known) and, for failures, error.type (the retry error class, a dozen values):
//
//	cqlsafe.attempts            counter   attempts sent (asynchronous; of hedged executions, see below)
//	cqlsafe.retries             counter   failed attempts sent again (+ cqlsafe.decision)
//	cqlsafe.refusals            counter   failed attempts not retried (+ cqlsafe.refusal.reason)
//	cqlsafe.outcome_unknown     counter   executions that ended with an unknown outcome
//	cqlsafe.hedges.sent         counter   hedges (speculative executions) sent
//	cqlsafe.hedges.won          counter   executions a hedge answered
//	cqlsafe.operation.duration  histogram seconds per logical execution, retries and backoff included
//
// Two gauges, reported for each Policy given to ObserveClockOffset once it has measured
// its clock (retry.Policy.MeasureClock), carry server.address and the caller's
// attributes instead:
//
//	cqlsafe.clock.offset              gauge  seconds, the node's clock minus this process's (positive: it lags)
//	cqlsafe.clock.offset.uncertainty  gauge  seconds, within which the offset is known
//
// Refusal reasons are a fixed set: context_done, not_retryable, batch_logged,
// not_idempotent, attempts_exhausted, and not_a_step (retry.Do).
//
// Hedges are counted by the Policy as it sends them (retry.Hedges): hedge k k delays
// after the first execution while no answer has come, while the hedge budget holds
// one. Of a hedged execution, cqlsafe.attempts counts the failed attempts and the one
// that answered, a hedge's or not, but not those still in flight when it ended. A
// hedge won when the execution succeeded with a hedge's answer, the first execution
// still in flight (retry.Hedges.Won); its attempt event, when the observers saw it,
// is marked.
//
// cqlsafe.attempts is an asynchronous (observable) counter fed by one atomic count
// per attribute set, read at each collection: every execution adds to it, and an
// atomic add costs a fraction of a synchronous measurement. Readers see a monotonic
// sum per attribute set, as from a synchronous counter; unlike one, it carries no
// exemplars, and a reader with delta temporality gets a zero point for an attribute
// set with no attempt since its last collection.
//
// settle calls given the Instrumentation (settle.WithObserver) are counted apart,
// with db.system.name:
//
//	cqlsafe.settle.results      counter   settle.Write and settle.LWT calls, by cqlsafe.settle.kind
//	                                      and cqlsafe.settle.outcome (+ error.type when one failed:
//	                                      "unsettleable", or the retry error class of a failed read)
package cqlsafeotel
