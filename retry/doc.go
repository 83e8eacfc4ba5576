// Package retry makes "retry, not rollback" the easy path for Cassandra writes.
//
// After a failed multi-statement write, undoing what was applied makes a distributed
// store worse. Re-executing the failed statement is safe — if it is idempotent and
// re-sent with the same write timestamp. This package decides the first and enforces
// the second:
//
//   - Classify reads any CQL statement (or batch) and says whether executing it twice
//     with the same values and timestamp has the effect of once, and why not.
//   - Policy is a gocql.RetryPolicy that never retries what is not idempotent (gocql
//     v1.7.0 retries anything once a policy is set), decides by error class, bounds
//     attempts and backs off with jitter, stopping when the context is done.
//   - Pin and Exec stamp a query or batch with a timestamp from a clientid.Clock once,
//     before the first attempt, and mark it idempotent when Classify agrees. gocql
//     otherwise sends a fresh timestamp with every attempt, and a late retry can
//     overwrite a newer write by another client.
//   - Do runs multi-statement work: when a step fails transiently it re-runs the work,
//     skipping steps already applied and re-sending the failed one with its original
//     timestamp. Nothing is rolled back.
//   - OutcomeUnknownError reports a write that may or may not have applied, with its
//     statements, values and timestamp; Outbox keeps such writes on disk to replay later.
//
// Errors are classified by type and protocol code (ClassifyError), never by message.
package retry
