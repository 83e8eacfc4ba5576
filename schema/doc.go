// Package schema holds cqlsafe's CQL templates — the event log, the attribute-event
// model, the tombstone table, an overwrite-friendly wide table — and renders, applies
// and lints CQL.
//
// The templates are plain .cql files (embedded here, readable and copyable on their
// own: comments explain each choice of key, compaction, TTL and gc_grace_seconds).
// Render fills in names and replication with identifiers validated and quoted; Apply
// runs DDL idempotently and waits for schema agreement after each statement; Lint flags
// schema and statements that defeat idempotent writes. ParseColumns reads the column
// types a .cql file declares as a retry.Schema, so statements can be judged by their
// columns' types without a cluster.
package schema
