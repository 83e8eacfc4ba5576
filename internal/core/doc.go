// Package core is the root of cqlsafe's driver-neutral module: the rules every driver
// adapter shares, written once and importing no Cassandra driver. Only cqlsafe's own
// modules can import it (Go enforces internal/ by import path, across modules); the
// packages users import — github.com/cqlsafe/cqlsafe/… for gocql v1.7 — are adapters
// over it. See docs/drivers.md for the layout and what moves here next.
package core
