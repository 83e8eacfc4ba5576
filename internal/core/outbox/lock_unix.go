//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package outbox

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// OutboxLocks says Open locks the file against other processes.
const OutboxLocks = true

// lockFile takes an exclusive flock on f itself — the inode, so a symlink, a hard link
// or another path to the same file meets the same lock, and no separate lock file can
// be deleted from under it. Closing f releases it, and so does the death of the process.
func lockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w (%s)", ErrLocked, f.Name())
		}
		return fmt.Errorf("outbox: lock: %w", err)
	}
	return nil
}
