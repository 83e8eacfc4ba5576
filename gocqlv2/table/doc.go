// Package table is cqlsafe's table package for the Apache Cassandra Go driver v2
// (github.com/apache/cassandra-gocql-driver/v2): it describes Cassandra tables and
// derives from one description what the other cqlsafe packages need — a row's values,
// its primary key and the key's byte encoding, and the CQL statements that write,
// read, delete and scan the table. Its API is github.com/cqlsafe/cqlsafe/table's, with
// the v2 driver's types; the rules are the same code (internal/core/table).
//
// Describe (or FromMetadata) reads a table once; the *Table is immutable and safe to
// share. From it:
//
//   - Values turns a row — a map[string]any, or a struct with gocqlx-style `db` tags —
//     into one value per column in Columns order. Absent and nil values (typed nil
//     pointers included) and empty non-frozen collections are gocql.UnsetValue, never
//     NULL: UNSET writes nothing, NULL writes a tombstone. Zero values (0, false, "")
//     are written. KeyValues takes just the primary key.
//   - EncodeKey and DecodeKey turn a primary key into a deterministic byte string and
//     back.
//   - The builders — Insert, Update, DeleteRow, DeletePartition, SelectByKey,
//     ScanRange, CountRange — return CQL text in which every identifier is quoted and
//     every value is a bind marker. A write's TTL and timestamp are bound too: bind
//     gocql.UnsetValue for no TTL, so the table's default_time_to_live applies (an
//     explicit 0 would override it).
//
// Column types come from the type text Cassandra reports and the keyspace's
// user-defined types (the v2 driver's own metadata cannot describe a user type): UDT
// values bind as the driver marshals them (map[string]any, structs with `cql` tags),
// vectors as []float32 and the like. A tuple column is written as a literal of element
// markers, "(?, ?)", as with gocql v1.7: bind through InsertRow, Args and KeyArgs,
// which split tuple values.
//
// Bad input — an invalid name, an unknown column, a missing key, a value of the wrong
// type — is an *Error matching one of the sentinels, returned before anything is sent.
// Before Cassandra 5.0, SelectByKey and ScanRange asking for WRITETIME or TTL of a
// non-frozen collection or UDT return an *UnsupportedError (ErrUnsupported).
//
// gocqlx is built on gocql v1.7 and has no release for the v2 driver: there is no
// DescribeGocqlx here (see the README, "Both drivers").
package table
