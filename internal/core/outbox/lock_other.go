//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package outbox

import "os"

// OutboxLocks says Open locks the file against other processes.
const OutboxLocks = false

// lockFile: no flock on this platform; the caller must ensure a single Outbox per file.
func lockFile(*os.File) error { return nil }
