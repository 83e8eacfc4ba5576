// Package tombstone makes Cassandra deletes recoverable, and makes sure a delete never
// loses a write that raced it with a newer timestamp.
//
// Delete reads the row with the WRITETIME and TTL of each column, then in ONE logged
// batch (both apply, or neither, eventually) records a tombstone — the row's values,
// their write times and expiries, the id of the command that deleted it — and deletes
// the row USING TIMESTAMP T, the newest cell it read (Record.Timestamp).
//
// # What a racing write gets
//
// Cassandra's rule decides: a row deletion at T shadows every cell of the row with a
// timestamp <= T (the tombstone wins a tie). So a write that lands between Delete's read
// and its delete survives iff its timestamp is above T, and is then not in the record
// (it was not deleted). A racing write stamped <= T is removed and is not in the record
// either. That is harmless when it is not newer than its own column's cell as read (it
// would have lost to that cell anyway, except for a tie at the same microsecond with a
// different value), but a write from a clock behind, stamped above its column's cell
// and <= T, is lost: the same fate a plain DELETE deals a lagging writer. With clocks in
// step, a write issued after the read is stamped after every cell read, above T, and
// survives. The integration test TestTombstoneDeleteRacingWriteTimestamps pins this.
//
// Why not per column, each at its own WRITETIME? A row's INSERT also writes a row
// marker, whose timestamp cannot be read. Column deletions leave it, and the row would
// live on with null columns; only a row deletion removes it, and it must be at T to
// cover a marker from any INSERT that wrote a cell read (upserting a subset of columns
// makes the marker newer than the older cells). A row deletion at T makes column
// deletions below it moot.
//
// Every delete is its own record (clustered by a TimeUUID), so two racing deletes of one
// row are both visible. Undelete restores a row only when the most recent delete came
// from the given command and the row does not exist now, with INSERT … IF NOT EXISTS so
// that a row recreated meanwhile is never clobbered; otherwise it says why
// (ErrNotLastDelete, ErrRowExists, ErrNoTombstone). The restore is never re-sent (a
// re-sent LWT that had applied sees its own row); a lost reply is settled with a SERIAL
// read; the row is checked visible before the undelete is recorded (a delete stamped
// after the restore's Paxos ballot, such as a future-dated one, shadows it:
// ErrRestoreShadowed). Restored cells keep the TTL they had left. Plan and List present
// a recovery before anyone applies it. Tombstones expire by TTL (default 30 days), so
// there is no "empty trash" job to race; Reconcile reports (and, when asked, cleans up)
// the untidy states races leave behind, deleting exactly the records it read.
//
// Tombstones are for recovering from application bugs, not a soft-delete feature: the
// deleted row is gone for readers of the table.
//
// Rows with only primary-key columns, or whose columns are all null, have no cell to
// read a WRITETIME from: Delete then deletes at a timestamp taken from the clock just
// before its read, so writes stamped after the read (by clocks in step with this one)
// survive. The row marker an INSERT writes has no readable timestamp either: if a row's
// marker is newer than all its cells (a key-only INSERT after the cells were written),
// the row survives the delete with null columns.
//
// Delete records the columns of the *table.Table it is given, and deletes the whole
// row: describe the table again after adding a column.
//
// # Cassandra versions
//
// Cassandra 5.0 and later: every column type. Before 5.0 (table.Describe reads the
// cluster's oldest version) WRITETIME and TTL of scalars, frozen collections, tuples
// and frozen UDTs read exactly as on 5.0, so tables of those work the same; but the
// server refuses them for a non-frozen collection or UDT (one cell per element, no
// MAXWRITETIME), and without them neither T nor a restored cell's TTL can be known.
// Delete, Plan, Undelete and Reconcile on such a table return a
// *table.UnsupportedError naming the column and version (errors.Is
// table.ErrUnsupported) before anything is read or written. List works on every
// version. Use frozen<…> columns, or upgrade, to make those tables recoverable.
//
// The tombstone table comes from the schema package's "tombstones" template.
package tombstone
