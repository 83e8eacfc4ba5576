// Package keymigrate is cqlsafe's key migration for the Apache Cassandra Go driver v2
// (github.com/apache/cassandra-gocql-driver/v2): a table moved to a new primary key
// format online — dual writes (DualWrite, DualDelete) while a backfill copies every row
// under its transformed key (Backfill in one process, or RunWorker in any number sharing
// a lease table), then Verify. Its API is github.com/cqlsafe/cqlsafe/keymigrate's, with
// the v2 driver's types (tables from gocqlv2/table, writes through gocqlv2/retry); the
// copy, the leases and the checks are the same code (internal/core/keymigrate), and the
// lease table is the same. The package doc of github.com/cqlsafe/cqlsafe/keymigrate
// says what each stage guarantees: every cell copied USING TIMESTAMP its WRITETIME with
// its remaining TTL, so a newer dual write always wins; a non-frozen list never
// appended twice; a lightweight transaction of unknown outcome settled, never re-sent.
package keymigrate
