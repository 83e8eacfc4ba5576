//go:build unix && !linux

package harness

import "os/exec"

// guardedCommand runs the JVM under the /bin/sh stdin watchdog: there is no
// PR_SET_PDEATHSIG outside Linux.
func guardedCommand(path string, args []string) (*exec.Cmd, func()) {
	return watchdogCommand(path, args)
}
