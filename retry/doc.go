// Package retry makes "retry, not rollback" the easy path for Cassandra writes.
//
// After a failed multi-statement write, undoing what was applied makes a distributed
// store worse. Re-executing the failed statement is safe — if executing it twice with
// the same write timestamp leaves Cassandra as executing it once. This package decides
// that, and pins the timestamp:
//
//   - Classify reads any CQL statement (or batch) and says whether executing it twice
//     with the same values and timestamp has the effect of once, and why not.
//     Policy.Repeatable refines it with column types (WithSchema, SessionSchema) and the
//     values bound to one execution: a non-empty list bound whole to a non-frozen list
//     column is not repeatable — Cassandra keys each element by a TimeUUID from the
//     server's clock, so a repeat appends a second copy even with the same timestamp.
//   - Policy.Exec and Policy.ExecBatch stamp a query or batch with a timestamp from a
//     clientid.Clock once, before the first attempt, and retry it through a policy of
//     its own that decides per error (see Policy for the table). gocql otherwise sends a
//     fresh timestamp with every attempt, and a late retry can overwrite a newer write.
//   - Do runs multi-statement work: when a step fails transiently it re-runs the work,
//     skipping steps already applied and re-sending the failed one with its original
//     timestamp and values. Nothing is rolled back. Mint ids and times before Do: a
//     step bound to other values on a re-run is ErrNondeterministic, and nothing is sent.
//   - OutcomeUnknownError reports a write that may or may not have applied (a timeout, a
//     lost connection, a context that ended while an attempt was in flight), with its
//     statements, values and timestamp; package outbox keeps such writes on disk to
//     replay later (WithOutbox takes any Recorder).
//
// One way in: Policy.Exec runs a query, Policy.ExecBatch a batch, AtTimestamp brings your
// own timestamp, and inside Do the package-level Exec and ExecBatch are the steps (outside
// Do they return ErrOutsideDo). Earlier ways and their replacements: Pin(…).Exec and
// Policy.Query(…).Exec → Policy.Exec(ctx, q, AtTimestamp(ts)); PinBatch and ExecBatchAt →
// Policy.ExecBatch(ctx, s, b, AtTimestamp(ts)); the timestamp a write was pinned to →
// draw it with Policy.Clock().Next() and pass it with AtTimestamp; Exec with options
// outside Do → Policy.Exec; OpenOutbox → outbox.Open.
//
// What is guaranteed: a statement this package re-sends (a retry, a Do re-run, an outbox
// replay) was judged repeatable for the values it carries, and carries the timestamp of
// its first attempt; a statement judged not repeatable is re-sent only after an error
// that proves nothing was applied (Unavailable, Overloaded, Bootstrapping, no
// connection). A write timeout of type BATCH_LOG is not such proof: a batchlog replica
// that stored the batch but answered late replays it later. Set on a cluster
// (cluster.RetryPolicy), a Policy retries reads and never re-sends a write it did not
// pin.
//
// Two limits are inherent to Cassandra and hold for every repeat, this package's or
// anyone's (the idempotence oracle, CORRECTNESS.md, measures both):
//
//   - A cell's expiry is computed from when each attempt arrives (its TTL, or the
//     table's default_time_to_live), and at equal timestamps the later expiry wins: a
//     repeat extends a TTL'd cell's life by the time between attempts (seconds for the
//     Policy's retries; outbox replays count the elapsed time off the TTL).
//   - Two different writes at exactly the same timestamp to an expiring cell are
//     reconciled by expiry, not value: a repeat of the one that lost the tie wins it.
//     Client clocks (clientid) make such ties between writers rare; writers that take
//     timestamps from shared event times should not write the same TTL'd cells.
//
// Errors are classified by type and protocol code (ClassifyError), never by message.
package retry
