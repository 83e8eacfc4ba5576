// Package retry is github.com/cqlsafe/cqlsafe/retry for the Apache Cassandra Go driver
// v2 (github.com/apache/cassandra-gocql-driver/v2): the same API, the same rules — the
// verdict, the decision per error, pinned timestamps and unknown outcomes come from
// cqlsafe's driver-neutral core, which both drivers' packages drive —, with the v2
// driver's types. Moving from gocql v1.7 is a change of import paths:
//
//	github.com/cqlsafe/cqlsafe/retry     →  github.com/cqlsafe/cqlsafe/gocqlv2/retry
//	github.com/cqlsafe/cqlsafe/clientid  →  github.com/cqlsafe/cqlsafe/gocqlv2/clientid
//	github.com/gocql/gocql               →  github.com/apache/cassandra-gocql-driver/v2
//
// Policy.Exec and Policy.ExecBatch stamp a query or batch with a timestamp drawn once,
// before the first attempt, and retry it through a policy of their own that decides per
// error (see Policy for the table); OutcomeUnknownError reports a write that may or may
// not have applied, with its statements, values and timestamp. Policy.Repeatable judges
// one execution; Classify a text.
//
// What differs from the v1.7 package, because the driver differs:
//
//   - The v2 driver asks a retry policy about a failed attempt only when the statement
//     is marked idempotent (query_executor.go:210 in v2.1.2). Exec and ExecBatch mark
//     every statement they send idempotent — on the wire; the verdict is kept here —, so
//     their policy sees every error: a write that is not repeatable is still retried
//     after errors that prove nothing was applied, and never after one that may have
//     applied it. Speculative execution, the flag's other effect, is turned off for them.
//     A Policy set on a cluster (cluster.RetryPolicy) is asked only about statements the
//     application marked idempotent.
//   - The v2 driver returns a deep copy of a keyspace's metadata on every call:
//     SessionSchema keeps one per keyspace for a second (see there).
//
// Do runs multi-statement work, re-running its function with the steps that succeeded
// skipped and the failed one re-sent at its first timestamp (see Do).
//
// WithHedging sends a second copy of a slow repeatable write to another coordinator;
// the session picks hosts through HedgingHosts (and, to charge hedges that only
// overtook a slow request, observes streams through HedgeStreams):
//
//	cluster.PoolConfig.HostSelectionPolicy = retry.HedgingHosts(gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()))
//	cluster.StreamObserver = retry.HedgeStreams(cluster.StreamObserver)
//	policy := retry.NewPolicy(retry.ServicePreset(), retry.WithHedging())
//
// Beside this package, for the v2 driver: eventlog and outbox (gocqlv2/eventlog,
// gocqlv2/outbox), with the same file format as the v1.7 outbox. Not on v2 yet (issue
// #26; docs/drivers.md has the plan): the packages overwrite, tombstone, keymigrate,
// settle and otel.
package retry
