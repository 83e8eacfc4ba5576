// Package install checks that cqlsafe installs as a user installs it: from a release
// that `go get` resolves with no replace and no checkout, on each driver, with the very
// lines README.md's Install section gives. Its test builds the release with
// integration/release into a file GOPROXY and runs a fresh application per driver
// against a real Cassandra.
package install
