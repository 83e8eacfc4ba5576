// Package engine is what a cqlsafe retry Policy does per execution, whichever Go driver
// sends the statements: the options and their defaults, the backoff, the verdict cache,
// the decision per failed attempt with its Event and Trace, the clock-skew refusal and
// the final outcome of an execution. A driver adapter (the retry package of
// github.com/cqlsafe/cqlsafe for gocql v1.7, of github.com/cqlsafe/cqlsafe/gocqlv2 for
// the Apache driver v2) maps its driver's errors to decision.Facts, calls Exec.OnAttempt
// and Exec.OnError from its driver's per-execution RetryPolicy, and configures the
// driver's query; every rule is here once.
package engine
