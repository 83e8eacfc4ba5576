// Package tombstone is cqlsafe's recoverable delete for the Apache Cassandra Go driver v2
// (github.com/apache/cassandra-gocql-driver/v2). Its API is
// github.com/cqlsafe/cqlsafe/tombstone's, with the v2 driver's types (tables from
// gocqlv2/table, retries through gocqlv2/retry); the record format, the delete, the
// undelete and Reconcile are the same code (internal/core/tombstone), and the tombstone
// table is the same (the schema package's "tombstones" template): records written
// through one driver are read and undone through the other.
//
// Delete reads the row with the WRITETIME and TTL of each column, then in ONE logged
// batch records a tombstone — the row's values, their write times and expiries, the id
// of the command that deleted it — and deletes the row USING TIMESTAMP T, the newest
// cell it read: a write racing the delete survives iff its timestamp is above T.
// Undelete restores the row only when its most recent delete came from the given
// command and the row does not exist now, with INSERT … IF NOT EXISTS sent once (never
// re-sent: a re-sent LWT that had applied sees its own row), a lost reply settled with a
// SERIAL read, and the row checked visible before the undelete is recorded. Restored
// cells keep the TTL they had left. Plan and List present a recovery before anyone
// applies it; Reconcile reports (and, when asked, cleans up) the untidy states races
// leave behind. Before Cassandra 5.0 a table with a non-frozen collection or UDT is a
// table.UnsupportedError before anything is read. The package doc of
// github.com/cqlsafe/cqlsafe/tombstone says why each rule is so.
package tombstone
