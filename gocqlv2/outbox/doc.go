// Package outbox is github.com/cqlsafe/cqlsafe/outbox for the Apache Cassandra Go driver
// v2: the same file format (a file written by either is read by both), API and rules
// (cqlsafe's driver-neutral core), the v2 driver's types.
//
// It keeps writes whose outcome stayed unknown in a local file, to re-apply
// them later with their original timestamps.
//
// A retry.Policy given an Outbox (retry.WithOutbox) appends each repeatable write that
// failed in a way that may have applied it — a timeout, a lost connection — as the
// *retry.OutcomeUnknownError that reported it: statements, bound values, batch type and
// pinned timestamp. Replay re-sends them. Because each record is repeatable and carries
// the timestamp of its first attempt, replaying it any number of times has the effect
// of applying it once, and never overwrites a newer write. Replay judges every record
// again and never sends one that is not repeatable.
//
// # Writes with a TTL
//
// Cassandra computes a cell's expiry from the time the write arrives (now + TTL), and at
// equal timestamps the cell that expires later wins. Re-sent unchanged hours later, a
// write with a TTL would live that much longer, and bring back cells of its first
// attempt that had already expired. So Replay sends each TTL less the time since the
// record's timestamp (taken by the writer's clock just before the first attempt), in
// whole seconds rounded up: a replayed write with a TTL expires when the first attempt's
// would have, to the second, and never later — except a write whose TTL ran out before
// the replay, which is sent with TTL 1 and so is readable again for up to a second after
// the replay (below).
//
// The TTL is read where Cassandra reads it: a literal USING TTL n (or AND TTL n), a bound
// USING TTL ? (its value among the bound values; UNSET inherits the table's), else, for
// an INSERT or UPDATE, the table's default_time_to_live, read from system_schema.tables
// when the replay runs; Replay then adds USING TTL n (AND TTL n after a USING TIMESTAMP).
// The literal is replaced token by token, a bound value by a value of the same Go type.
// A TTL of 0 means no expiry and is left alone; a DELETE has none. Each statement of a
// batch, and of a BEGIN BATCH text, is judged alone.
//
// A write whose TTL ran out before the replay is sent all the same, with TTL 1 (the
// least Cassandra takes), not dropped: had the first attempt applied, its cells would
// have expired, and an expired cell still hides every older value of its column, as a
// tombstone does; its nulls, element deletions and collection overwrites are
// tombstones, which never expire. Dropped, the older values would show for good. A
// record whose every write ran out is counted in ReplayReport.Expired (and as applied).
//
// Limits, each shifting expiry by as much:
//   - Elapsed time is this process's clock against the writer's: skew between them
//     (or with the server's) moves the expiry. Retries inside the Policy, seconds apart,
//     are not adjusted.
//   - A record whose timestamp is ahead of this clock, and a statement whose TTL cannot
//     be read (a TTL that is not a decimal int literal, a bound TTL that is null or not an
//     integer, values that do not match the bind markers, text that does not lex), is
//     replayed as recorded and counted in ReplayReport.TTLAsRecorded.
//   - A default_time_to_live altered since the first attempt is used as it is now.
//   - A write whose TTL ran out before the replay is readable again for up to a second
//     after the replay (TTL 1 is the least Cassandra takes), although one execution's
//     cells expired long before: a reader, or an INSERT … IF NOT EXISTS claim, can see
//     its values in that second. Dropping it instead would let the older values it
//     hides show for good.
package outbox
