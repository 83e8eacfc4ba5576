// Package suite holds cqlsafe's integration tests: every claim the library makes about
// Cassandra, checked against a real node started (or found) by package harness.
package suite
