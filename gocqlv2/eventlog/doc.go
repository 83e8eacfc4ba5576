// Package eventlog is github.com/cqlsafe/cqlsafe/eventlog for the Apache Cassandra Go
// driver v2: the same API and rules (cqlsafe's driver-neutral core), the v2 driver's
// types (Event.ID is its UUID; retries go through github.com/cqlsafe/cqlsafe/gocqlv2/retry).
//
// It is an append-only, bucketed, TimeUUID-keyed event log on Cassandra:
// the field report's answer to updates that are not idempotent.
//
// Every change is a new row keyed by a TimeUUID made on the client from the event's own
// time (or from an idempotency key), assigned once before the first attempt. A retried
// or re-submitted append rewrites the same rows with the same values and the same write
// timestamp (the event time), so nothing is lost or duplicated, and a retry hours later
// still lands in the right order. An event is stored, bucketed and ordered by its id's
// time; a caller-set id must be a TimeUUID of the event's time (ErrIDTimeMismatch).
//
// When a write fails, Append returns an *AppendError (ErrAppendIncomplete) carrying the
// events with the ids it assigned: re-submit those, not the originals — a key-less
// event re-submitted without its id gets a new one and duplicates a batch that applied.
// Events with a Key get the same id again either way.
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
// Expiring events (a table default_time_to_live, read once per Log): an event's TTL runs
// from when it lands, so each Append (re)writes the bucket's index row, at most 30
// minutes before its events, with the events' TTL plus one hour: the index row never
// expires before an event it points to. Without a TTL index rows never expire.
//
// The table comes from the schema package's "eventlog" template.
package eventlog
