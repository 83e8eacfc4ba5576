// Package settle is cqlsafe's settle for the Apache Cassandra Go driver v2
// (github.com/apache/cassandra-gocql-driver/v2): it finds out, after the fact, whether a
// write whose outcome was unknown took effect, by reading what Cassandra holds. Its API
// is github.com/cqlsafe/cqlsafe/settle's, with the v2 driver's types; the parsing, the
// mapping of a statement to its cells and the outcome rules are the same code
// (internal/core/settle).
//
// Write settles a pinned write (a *retry.OutcomeUnknownError of gocqlv2/retry): it reads
// the WRITETIME of the cells the write wrote and compares them with its pinned
// timestamp — Landed, Superseded by a newer write, or NotVisible (which is not "did not
// happen": see Write). LWT settles a conditional write with a SERIAL read of its row —
// Applied, NotApplied, or Unknown — which also completes any Paxos round still in
// progress for the row.
//
// Neither guesses: a write it cannot map to cells it can read (a DELETE, a counter, a
// statement whose key is computed on the server) is an *UnsettleableError. Tables are
// described with gocqlv2/table's Describe (the driver's metadata and the keyspace's
// user types).
package settle
