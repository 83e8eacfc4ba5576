// Package decision is the retry decision table, driver-neutral: what an error proves
// about a write (its class, and whether a write timeout or failure says CDC or BATCH),
// and whether a failed attempt may be sent again given the statement's verdict, whether
// its timestamp is pinned and how many attempts were made. A driver adapter maps its own
// error types to Facts (Classify's Driver); everything else is decided here, once, for
// every driver.
package decision
