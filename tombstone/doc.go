// Package tombstone makes Cassandra deletes recoverable, and makes sure a delete never
// loses a write that raced it.
//
// Delete reads the row with the WRITETIME of each column, then in ONE logged batch
// (both apply, or neither, eventually) records a tombstone — the row's values, their
// write times, the id of the command that deleted it — and deletes the row USING
// TIMESTAMP of the newest cell it read. A write that raced in after the read carries a
// later timestamp and survives the delete; the tombstone holds exactly what was deleted.
//
// Every delete is its own record (clustered by a TimeUUID), so two racing deletes of one
// row are both visible. Undelete restores a row only when the most recent delete came
// from the given command and the row does not exist now, with INSERT … IF NOT EXISTS so
// that a row recreated meanwhile is never clobbered; otherwise it says why
// (ErrNotLastDelete, ErrRowExists, ErrNoTombstone). Plan and List present a recovery
// before anyone applies it. Tombstones expire by TTL (default 30 days), so there is no
// "empty trash" job to race; Reconcile reports (and, when asked, cleans up) the untidy
// states races leave behind.
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
// The tombstone table comes from the schema package's "tombstones" template.
package tombstone
