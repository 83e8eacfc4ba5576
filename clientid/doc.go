// Package clientid makes identities and write timestamps on the client, once, before
// the first attempt of a write — the precondition for retrying safely.
//
// A retried write must carry the same values and the same write timestamp as the first
// attempt, or a late retry can overwrite newer data. So nothing in a write may be chosen
// by the server (now(), uuid()) or re-chosen per attempt:
//
//   - Clock hands out write timestamps (µs since the Unix epoch) strictly increasing
//     within a process, even when the wall clock steps back; Reserve gives a caller
//     several consecutive values nobody else receives (an overwrite takes N and N+1).
//   - NewRandom (v4), NewV7 (time-ordered) and FromKey (v5, from an idempotency key)
//     make UUIDs; NewTimeUUID and TimeUUIDFromKey make version 1 TimeUUIDs from the
//     event's own time, random or derived from an idempotency key, so a re-submitted
//     request yields the same event id. Compare, MinTimeUUID and MaxTimeUUID order and
//     bound them exactly as Cassandra's timeuuid type does.
//   - Bucket maps a time to a fixed-width time bucket to bound partition size.
//   - SortableInt64 and ReverseTime encode numbers and times as fixed-width strings whose
//     byte order is numeric (or reverse-chronological) order, for text keys.
//
// Everything here is safe for concurrent use and allocation-free on the hot paths.
package clientid
