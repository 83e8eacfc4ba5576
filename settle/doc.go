// Package settle finds out, after the fact, whether a write whose outcome was unknown
// took effect, by reading what Cassandra holds.
//
// Write settles a pinned write (a *retry.OutcomeUnknownError): it reads the WRITETIME of
// the cells the write wrote and compares them with its pinned timestamp — Landed,
// Superseded by a newer write, or NotVisible (see Write for when that can still change).
// LWT settles a conditional write with a SERIAL read of its row — Applied, NotApplied,
// or Unknown — which also completes any Paxos round still in progress for the row.
//
// Neither guesses: a write it cannot map to cells it can read (a DELETE, a counter, a
// statement whose key is computed on the server) is an *UnsettleableError.
package settle
