//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package outbox

import "io"

// OutboxLocks says Open locks the file against other processes.
const OutboxLocks = false

// lockOutbox: no flock on this platform; the caller must ensure a single Outbox per file.
func lockOutbox(string) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
