// Package faults is cqlsafe's fault suite: a three-node Cassandra cluster (RF=3) run
// natively on 127.0.0.11–13, a fault proxy in front of every node, and scenarios that
// kill, pause and cut nodes off while cqlsafe writes — each checked against a model of
// what must be in Cassandra afterwards. Negative controls show that the suite sees the
// losses and duplicates the library rules out.
//
// It runs when CQLSAFE_FAULTS=1 (CI sets it) and needs Java 17, Maven and the scripts in
// ../../scripts; otherwise its tests skip and say so.
package faults
