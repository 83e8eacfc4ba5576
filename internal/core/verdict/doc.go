// Package verdict judges CQL text for repeatability: whether executing it twice with the
// same bound values and the same pinned write timestamp leaves Cassandra as executing it
// once. It is the one implementation behind retry.Classify, the retry Policy's decisions,
// `cqlsafe lint` and `cqlsafe vet`, and it knows no driver: schema metadata comes in
// through Schema, bound values are judged with a driver's ValueInspector.
package verdict
