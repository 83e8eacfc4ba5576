//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package outbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// OutboxLocks says Open locks the file against other processes.
const OutboxLocks = true

// lockOutbox takes an exclusive flock on the file at path (created if need be). The lock
// lives on a file of its own because Replay replaces the outbox file by rename, which
// would leave a lock on the old inode guarding nothing. Closing releases it, and so does
// the death of the process: a stale lock file is harmless.
func lockOutbox(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("outbox: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s)", ErrLocked, path)
		}
		return nil, fmt.Errorf("outbox: lock: %w", err)
	}
	return f, nil
}
