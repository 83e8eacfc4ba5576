// Package keymigrate changes a table's key format without a wrong moment: the staged
// procedure of the "numbers as string keys" field report (write both forms, backfill,
// switch reads, drop the old), for Cassandra, where a new key means a new table.
//
// A Migration ties an old and a new table (same non-key columns) and a Transform from an
// old row to its new key. The stages:
//
//  1. Create the new table. Deploy writers that call DualWrite and DualDelete: every
//     write and every delete goes to both tables with the SAME pinned timestamp, in one
//     logged batch (both apply or neither, eventually; a logged batch, not two writes,
//     so a crash between them cannot leave the tables disagreeing until the batchlog
//     replays). A delete of the old table alone would leave the row in the new one, to
//     come back at cut-over. Absent and nil values (typed nil pointers included) are
//     bound as UNSET: the column is left as it is, never overwritten with NULL.
//  2. Run Backfill. It scans the old table by token range, paged, with bounded
//     concurrency and an optional throttle, transforms each key and writes each cell to
//     the new table USING TIMESTAMP its original WRITETIME and with its remaining TTL.
//     Because the copy carries the old timestamp, a newer dual-written value always
//     wins and a row DualDelete removed stays removed: a backfill running late can never
//     overwrite fresher data or resurrect a row. A cell without a TTL is copied without
//     one (UNSET), so the new table's default_time_to_live applies, as to any fresh
//     write. Progress is checkpointed to a file after each range; a crashed backfill
//     resumes from it, and re-copying a range is harmless (for lists, see below).
//     For a table too large for one process, RunWorker does the same copy in any
//     number of workers on any machines: they claim ranges through leases in a
//     Cassandra table (LWTs, a TTL, renewed while copying), a dead worker's range is
//     taken over when its lease expires, and Status reports progress from that table.
//     The command `cqlsafe migrate` runs the stages with it.
//  3. Run Verify: row counts and a full (or sampled) value comparison after key
//     transformation; NULL and a zero value (0, "", false) differ. It reports
//     differences and never fixes anything by itself.
//  4. Cut over: switch reads to the new table and watch them; stop dual writes (write
//     only the new table); after a safety period, drop the old table. Keep dual writes
//     on until reads have been switched everywhere, or a reader of the old table misses
//     new rows.
//
// Two old rows mapping to one new key is an error (ErrDuplicateKey), reported, never
// merged silently. A partition that holds static cells and no rows (its clustering
// columns read NULL) stops Backfill with an error naming it: it has no row to key, and a
// made-up clustering value would write a row that never existed. Verify compares the
// cells as Cassandra returns them, serialised: NaN equals itself, and a NULL field of a
// UDT or element of a tuple differs from a zero one. Known limits: the drivers scan a
// NULL tuple and a tuple of NULL elements alike, and decode a NULL UDT field (and, on
// gocql v1.7, a NULL tuple element) as its zero value, so a key holding one reaches the
// Transform so; a NULL tuple nested in a tuple is copied as a tuple of NULLs.
//
// # Non-frozen list columns
//
// Writing a whole non-frozen list is not idempotent, even at a pinned timestamp:
// Cassandra keys each element by a TimeUUID from the server's clock, so a second write
// of [1, 2] at the same timestamp leaves [1, 2, 1, 2]. (Frozen lists, sets, maps,
// UDTs and tuples are overwritten whole and need nothing special.) For list columns
// this package guarantees:
//
//   - A DualWrite or backfill copy that writes list elements is never re-sent after it
//     may have applied: not retried by the policy, never put in an outbox. It is re-sent
//     only after an error that says nothing was applied (Unavailable, Overloaded; when
//     the policy recognises the list). When its outcome is unknown the error is an
//     *retry.OutcomeUnknownError matching retry.ErrNotIdempotent: read the row before
//     writing the list again.
//   - Backfill copies a list cell only when the new table does not already hold that
//     list at the source's write time or later (it reads the new row's MAXWRITETIME
//     first, one extra read per row with a list). So re-running or resuming a backfill,
//     or backfilling a row that was already dual-written, does not duplicate elements.
//     This holds when that read sees earlier writes to the new table: the read and the
//     writes must overlap in replicas (R + W > RF, e.g. QUORUM for both), and a
//     copy whose outcome was unknown must have settled before the backfill is re-run.
//   - The copy writes the whole list at its newest element's write time (MAXWRITETIME)
//     with the longest of its elements' TTLs, or none when any element has none.
//
// # Cassandra versions
//
// DualWrite, DualDelete and Verify work on every supported version (4.1 and later).
// Backfill reads each cell's WRITETIME and TTL: on 4.1 that works for scalars, frozen
// collections, tuples and frozen UDTs, and copies exactly as on 5.0. A non-frozen
// collection or UDT has one cell per element, whose write times and TTLs only
// Cassandra 5.0 can read (MAXWRITETIME): before 5.0 Backfill of such a table returns a
// *table.UnsupportedError naming the column and the cluster's version (errors.Is
// table.ErrUnsupported) before it reads or writes anything — copying without the
// write times could overwrite newer dual-written values.
package keymigrate
