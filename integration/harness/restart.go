package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gocql/gocql"
)

// maxRestarts bounds how often one process restarts its native node: a node that stops
// answering schema changes again and again is a finding, not bad luck.
const maxRestarts = 2

// unresponsive reports whether err says the node did not answer in time (as opposed to
// refusing the statement).
func unresponsive(err error) bool {
	return errors.Is(err, gocql.ErrTimeoutNoResponse) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, gocql.ErrNoConnections) || errors.Is(err, gocql.ErrNoConnectionsStarted) ||
		// gocql v1.7 formats the control connection's error with %v: only its text is left.
		strings.Contains(err.Error(), "no response to connection startup within timeout") ||
		strings.Contains(err.Error(), gocql.ErrTimeoutNoResponse.Error())
}

// isNative reports whether the node is a native node the harness started.
func (n *Node) isNative() bool {
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.native != nil && n.native.cmd != nil
}

// restartNative replaces a native node that stopped answering with a fresh one on the
// same address and ports: data is thrown away, as at Close. Before it kills the JVM it
// asks for a thread dump (SIGQUIT: the JVM prints it to its log) and keeps the log
// outside the data directory, under a name it returns, so a hang can be looked into
// after the run. Only for native nodes the harness started and whose JVM still runs (one
// that exited is an error, with its log), at most maxRestarts times.
func (n *Node) restartNative(ctx context.Context) (kept string, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	old := n.native
	if old == nil || old.cmd == nil {
		return "", errors.New("harness: only a native node the harness started can be restarted")
	}
	select {
	case <-old.done:
		// A JVM that exited crashed (or was killed): a finding, not a hang to restart.
		return "", fmt.Errorf("harness: the native node exited (%v); last lines of %s:\n%s", old.waitErr, old.logPath, old.logTail(40))
	default:
	}
	if n.restarts >= maxRestarts {
		return "", fmt.Errorf("harness: native node already restarted %d times", n.restarts)
	}
	n.restarts++
	if old.cmd.Process != nil {
		_ = old.cmd.Process.Signal(syscall.SIGQUIT)
		time.Sleep(2 * time.Second) // the dump is written by the JVM's signal thread
	}
	kept, keepErr := keepLog(old)
	if err := old.close(); err != nil {
		return kept, err
	}
	nn, err := launchNative(ctx, old.conf, old.home, old.java, old.addr, old.nativePort, old.storagePort)
	if nn != nil {
		n.native = nn
	}
	if err != nil {
		return kept, fmt.Errorf("harness: restart native node: %w", err)
	}
	n.nodetool = nn.nodetool
	if err := n.waitReady(ctx); err != nil {
		return kept, fmt.Errorf("harness: restarted native node: %w", err)
	}
	if keepErr != nil {
		return "", fmt.Errorf("harness: native node restarted, its log not kept: %w", keepErr)
	}
	return kept, nil
}

// keepLog copies the node's log to os.TempDir()/cqlsafe-hung-node-<pid>-<time>.log (a name
// sweepNativeDirs leaves alone).
func keepLog(nn *nativeNode) (string, error) {
	src, err := os.Open(nn.logPath)
	if err != nil {
		return "", err
	}
	defer src.Close()
	name := filepath.Join(os.TempDir(), fmt.Sprintf("cqlsafe-hung-node-%d-%s.log", os.Getpid(),
		strings.ReplaceAll(time.Now().UTC().Format("20060102T150405.000"), ".", "")))
	dst, err := os.Create(name)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return "", err
	}
	return name, dst.Close()
}
