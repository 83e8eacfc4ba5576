// Package overwrite is cqlsafe's overwrite for the Apache Cassandra Go driver v2
// (github.com/apache/cassandra-gocql-driver/v2): Row and Partition replace a row or a
// partition with ONE unlogged single-partition batch — a DELETE at N and the INSERTs at
// N+1, the columns left out bound UNSET — so the columns left out cost one row (or
// partition) tombstone instead of one cell tombstone per NULL column. Its API is
// github.com/cqlsafe/cqlsafe/overwrite's, with the v2 driver's types; the statements,
// checks and options are the same code (internal/core/overwrite), sent through
// gocqlv2/retry's policy.
//
// As with gocql v1.7: N comes from the retry policy's clock (reserving N and N+1) or
// WithTimestamp, and every retry re-sends the same timestamps, so an overwrite is
// idempotent; a row with a non-empty non-frozen list is never re-sent after a failure
// that may have applied it (Cassandra would append the list again), and WithTimestamp
// refuses one (ErrListNotRepeatable). Describe refuses counter tables
// (ErrCounterTable). Bad input is an *Error matching a sentinel, returned before
// anything is sent.
package overwrite
