//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package outbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// lockPath takes an exclusive flock on the file at path (created if need be), held until
// the returned Closer is closed.
func lockPath(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("outbox: lock: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sameOwner gives f the owner of fi's file, where this process may (root, or the owner
// already): best effort.
func sameOwner(f *os.File, fi fs.FileInfo) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
