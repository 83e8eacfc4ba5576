// Package keymigrate changes a table's key format without a wrong moment: the staged
// procedure of the "numbers as string keys" field report (write both forms, backfill,
// switch reads, drop the old), for Cassandra, where a new key means a new table.
//
// A Migration ties an old and a new table (same non-key columns) and a Transform from an
// old row to its new key. The stages:
//
//  1. Create the new table. Deploy writers that call DualWrite: every write goes to both
//     tables with the SAME pinned timestamp, in one logged batch (both apply or neither,
//     eventually; a logged batch, not two writes, so a crash between them cannot leave
//     the tables disagreeing until the batchlog replays).
//  2. Run Backfill. It scans the old table by token range, paged, with bounded
//     concurrency and an optional throttle, transforms each key and writes each cell to
//     the new table USING TIMESTAMP its original WRITETIME and with its remaining TTL.
//     Because the copy carries the old timestamp, a newer dual-written value always
//     wins: a backfill running late can never overwrite fresher data. Progress is
//     checkpointed to a file after each range; a crashed backfill resumes from it, and
//     re-copying a range is harmless.
//  3. Run Verify: row counts and a full (or sampled) value comparison after key
//     transformation. It reports differences and never fixes anything by itself.
//  4. Cut over: switch reads to the new table and watch them; stop dual writes (write
//     only the new table); after a safety period, drop the old table. Keep dual writes
//     on until reads have been switched everywhere, or a reader of the old table misses
//     new rows.
//
// Two old rows mapping to one new key is an error (ErrDuplicateKey), reported, never
// merged silently.
package keymigrate
