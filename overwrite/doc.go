// Package overwrite replaces Cassandra rows so that the columns left out cost one row
// (or partition) tombstone instead of one cell tombstone per NULL column.
//
// Writing a whole row where 10–20 of 40 columns are NULL makes 10–20 cell tombstones per
// write; reads slow down, then fail at tombstone_failure_threshold. Row instead sends ONE
// unlogged single-partition batch:
//
//	DELETE FROM t USING TIMESTAMP N   WHERE <the row's key>
//	INSERT INTO t (<every column>) VALUES (…) USING TTL ? AND TIMESTAMP N+1
//
// with the absent columns bound as gocql.UnsetValue (nothing written), never NULL. The
// statements touch one partition, so Cassandra applies them as a single mutation. The
// insert must be at N+1: with equal timestamps a delete wins and the row vanishes.
// Partition does the same for a whole partition. Both draw N from the retry policy's
// clock (reserving N and N+1) or take it from WithTimestamp, and send the same
// timestamps on every retry, so an overwrite is idempotent and an old retry never beats
// a newer overwrite.
//
// Non-frozen lists are the exception. Cassandra keys each list element by a TimeUUID
// from the server's clock, so writing the same list twice, even with the same
// timestamps, leaves two copies ([7 8] → [7 8 7 8]). An overwrite that gives a non-empty
// non-frozen list is therefore sent without retries that could repeat it: it is retried
// only after errors proving nothing was applied, and a failure that may have applied it
// is a *retry.OutcomeUnknownError matching retry.ErrNotIdempotent — read the row before
// writing it again. WithTimestamp, which re-applies, refuses such a row
// (ErrListNotRepeatable). Frozen lists, sets, maps and UDTs have none of this.
//
// Describe a table once (Describe, or DescribeGocqlx from gocqlx metadata) and reuse the
// *Table. The table's description, how a row maps to values and the statements used
// live in package table: Table, Column, Error and the key sentinels here are its types
// and values under overwrite's names, so errors.Is and errors.As match either. Bad
// input — unknown column, missing key, wrong Go type, rows of several partitions — is
// an *Error matching one of the sentinels, returned before anything is sent.
package overwrite
