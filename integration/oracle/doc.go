// Package oracle checks the library's idempotence judgement against Cassandra itself:
// a statement the library is willing to repeat must leave the same state whether it
// runs once or several times with the same pinned timestamp. Everything lives in the
// package's tests: TestOracleStatements for statements, TestOracleOperations for the
// library's own entry points under a dropped response; see CORRECTNESS.md at the
// repository root.
package oracle
