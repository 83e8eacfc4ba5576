// Package vet is cqlsafe's static analyzer: it reads Go code that talks to Cassandra
// through gocql or gocqlx and reports, at the line where they are, writes that are unsafe
// to retry.
//
// Rules (the names are used in diagnostics and in "//cqlsafe:ignore RULE reason"
// comments, which silence RULE on their own line or the line below):
//
//   - not-idempotent: a statement retry.Classify judges not idempotent (LWT, counter,
//     list append, …) executed with a retrying gocql policy — set with RetryPolicy(…) on
//     the query or batch, or on a gocql.ClusterConfig of the same package (not in a
//     callback handed to another function: then not known) — or marked
//     Idempotent(true). gocql v1.7.0's own default is no retries, so a cluster created
//     with NewCluster and no RetryPolicy is not reported; a *retry.Policy never re-sends
//     a write it did not pin.
//   - rollback: a DELETE or UPDATE, of a table the function wrote before, executed in the
//     "if err != nil" branch of a failed write.
//   - null-not-unset: a literal nil (or (*T)(nil), ([]T)(nil)) bound to a written
//     non-key column of an INSERT or UPDATE, with nil → gocql.UnsetValue as the suggested
//     fix. Key columns come from -schema; without it an UPDATE's key columns are its WHERE
//     columns and an INSERT's first column is taken as its partition key.
//   - server-nondeterminism: now(), uuid(), currentTimestamp() … in a write; an id or
//     time minted (gocql.TimeUUID, uuid.New, time.Now, …) inside the function given to
//     retry.Do or inside a retry loop and bound to a statement there.
//   - unpinned-timestamp: a write executed by the driver with a retrying gocql policy and
//     neither WithTimestamp nor USING TIMESTAMP.
//   - list-assignment: a non-frozen list assigned whole (with -schema; without it, a list
//     literal), a counter update in a LOGGED batch, an UNLOGGED batch whose entries are
//     for different tables or visibly different partition keys.
//
// CQL is read where the source fixes it: a literal, a const, a concatenation of
// constants, a variable initialised once, a gocqlx qb builder chain whose arguments
// are all constants, or a gocqlx table model (table.New of constant Metadata, v2 or v3,
// in the package or, through an analysis fact, in a package it imports) and its
// statement, *Query and *Builder methods — built with gocqlx's own qb and table. A
// table or keyspace name known only at run time (in a qb chain, a concatenation or a
// fmt.Sprintf) is written as the quoted identifier "{expr}", so the statement's own
// rules are judged whatever the table. The query is then followed through method chains
// and variables of the same function to where it is executed. Any other run-time CQL
// is listed in Result.NotAnalysed (with whether it writes and the retry in force),
// not guessed.
// Methods named Query on types that look like gocql's (their query has WithTimestamp or
// Consistency) are read as well, so thin wrappers around gocql are covered.
package vet
