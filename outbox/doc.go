// Package outbox keeps writes whose outcome stayed unknown in a local file, to re-apply
// them later with their original timestamps.
//
// A retry.Policy given an Outbox (retry.WithOutbox) appends each repeatable write that
// failed in a way that may have applied it — a timeout, a lost connection — as the
// *retry.OutcomeUnknownError that reported it: statements, bound values, batch type and
// pinned timestamp. Replay re-sends them. Because each record is repeatable and carries
// the timestamp of its first attempt, replaying it any number of times has the effect
// of applying it once, and never overwrites a newer write. Replay judges every record
// again and never sends one that is not repeatable.
package outbox
