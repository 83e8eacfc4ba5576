// Package eventlog is an append-only, bucketed, TimeUUID-keyed event log on Cassandra:
// the field report's answer to updates that are not idempotent.
//
// Every change is a new row keyed by a TimeUUID made on the client from the event's own
// time (or from an idempotency key), assigned once before the first attempt. A retried
// or re-submitted append rewrites the same rows with the same values and the same write
// timestamp (the event time), so nothing is lost or duplicated, and a retry hours later
// still lands in the right order.
//
// Streams are split into time buckets (default one day) so partitions stay bounded; a
// small index table lists each stream's buckets. Events of one bucket are appended in
// one unlogged single-partition batch: atomically. Read streams across buckets in
// order, forwards or backwards, paged, in constant memory. Fold turns attribute events
// into current state.
//
// Clock skew: an event's position is its own time as the writer saw it. Writers whose
// clocks disagree interleave by those times, not by arrival. Each event records its
// writer (Event.Writer), so consumers can detect a writer whose events arrive out of
// order with respect to others.
//
// The table comes from the schema package's "eventlog" template.
package eventlog
