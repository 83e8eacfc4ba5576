// Package table describes Cassandra tables and derives from one description what every
// other cqlsafe package needs: a row's values, its primary key and the key's byte
// encoding, and the CQL statements that write, read, delete and scan the table.
//
// Describe (or DescribeGocqlx, or FromMetadata) reads a table once; the *Table is
// immutable and safe to share. From it:
//
//   - Values turns a row — a map[string]any, or a struct with gocqlx `db` tags — into
//     one value per column in Columns order. Absent and nil values (typed nil pointers
//     included) and empty non-frozen collections are gocql.UnsetValue, never NULL:
//     UNSET writes nothing, NULL writes a tombstone. Zero values (0, false, "") are
//     written. KeyValues takes just the primary key.
//   - EncodeKey and DecodeKey turn a primary key into a deterministic byte string and
//     back (tombstone records the keys of deleted rows this way).
//   - The builders — Insert, Update, DeleteRow, DeletePartition, SelectByKey,
//     ScanRange, CountRange — return CQL text in which every identifier is quoted and
//     every value is a bind marker; their docs list what each binds, in order. A
//     write's TTL and timestamp are bound too: bind gocql.UnsetValue for no TTL, so the
//     table's default_time_to_live applies (an explicit 0 would override it).
//
// Column types come from the type text Cassandra reports and the keyspace's
// user-defined types (gocql v1.7.0's metadata calls UDTs and vectors custom()): UDT
// values bind as gocql marshals them (map[string]any, structs with `cql` tags), vector
// values as []float32 and the like. gocql v1.7.0 cannot bind a tuple to one marker, so
// a tuple column is a literal of element markers (Column.Marker): bind through
// InsertRow, Args and KeyArgs, which split tuple values.
//
// Bad input — an invalid name, an unknown column, a missing key, a value of the wrong
// type — is an *Error matching one of the sentinels, returned before anything is sent.
//
// Describe also reads the release_version of the cluster's oldest node
// (CassandraVersion): before Cassandra 5.0 the server refuses WRITETIME and TTL of a
// non-frozen collection or UDT and has no MAXWRITETIME, so SelectByKey and ScanRange
// asking for them return an *UnsupportedError (ErrUnsupported) naming the column and
// the version, never a statement the server would reject. Every other column reads
// the same on 4.1 and 5.0.
//
// The packages that write (overwrite, tombstone, keymigrate) take a *Table;
// overwrite.Describe is Describe that also refuses counter tables.
package table
