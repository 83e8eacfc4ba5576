//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package outbox

import (
	"io"
	"io/fs"
	"os"
)

// OutboxLocks says Open locks the file against other processes.
const OutboxLocks = false

// lockFile: no flock on this platform; the caller must ensure a single Outbox per file.
func lockFile(*os.File) error { return nil }

// lockPath: no flock on this platform.
func lockPath(string) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// sameOwner: file ownership is not kept on this platform.
func sameOwner(*os.File, fs.FileInfo) {}
