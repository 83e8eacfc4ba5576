// Package nemesis runs cqlsafe inside a service under a nemesis, Jepsen-style: the
// example service (examples/orders) as several instances in front of a three-node
// Cassandra cluster (RF=3) on 127.0.0.11–13, a fault proxy before every node, a load
// generator recording every request and its outcome, a seeded nemesis that kills and
// pauses nodes, drops responses, injects server errors and latency, SIGKILLs service
// instances mid-request and restarts them (their outbox replays), with clocks that
// disagree between instances — and a checker that judges the history against what
// Cassandra holds at the end.
//
// It runs when CQLSAFE_FAULTS=1 (CI sets it: the short mode, about 5 minutes) or
// CQLSAFE_NEMESIS=1 (every configuration: the skew table's four rows, 100 s of nemesis by
// default), and needs Java 17, Maven and the scripts in ../../scripts; otherwise its tests
// skip and say so. CQLSAFE_NEMESIS_DURATION, CQLSAFE_NEMESIS_GAP (the mean pause between
// faults: 1s in the short mode, 2s otherwise) and CQLSAFE_NEMESIS_SEED set the long run,
// which prints its progress every 5 minutes; see FAULTS.md for the command and figures.
package nemesis
