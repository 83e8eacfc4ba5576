//go:build unix

package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// watchdogScript runs "$@" in the background and kills it (SIGKILL) when the shell's
// stdin reaches EOF: when the process holding the pipe's other end closes it or dies.
// Background jobs of a non-interactive shell get /dev/null as stdin, hence fd 3.
const watchdogScript = `exec 3<&0
"$@" </dev/null 3<&- & p=$!
(read -r _ <&3; kill -9 "$p" 2>/dev/null) & w=$!
exec 3<&-
wait "$p"; s=$?
kill "$w" 2>/dev/null
exit "$s"`

// watchdogCommand runs path with args under watchdogScript. stop closes the pipe, which
// kills the process; so does this process's death, however it happens.
func watchdogCommand(path string, args []string) (*exec.Cmd, func()) {
	cmd := exec.Command("/bin/sh", append([]string{"-c", watchdogScript, "sh", path}, args...)...)
	r, w, err := os.Pipe()
	if err != nil {
		// No pipe, no watchdog: fall back to an unguarded process killed by stop.
		cmd = exec.Command(path, args...)
		return cmd, func() { _ = cmd.Process.Kill() }
	}
	cmd.Stdin = r
	// The write end is close-on-exec: only this process holds it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, func() {
		_ = w.Close()
		_ = r.Close()
	}
}

// lockFile takes an exclusive flock on path, waiting for it until ctx ends. The lock goes
// away with the process, so a killed holder never blocks the next run.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("harness: lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("harness: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("harness: waiting for lock %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
