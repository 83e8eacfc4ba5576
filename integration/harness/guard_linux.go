package harness

import (
	"os/exec"
	"syscall"
)

// guardedCommand runs the JVM directly with PR_SET_PDEATHSIG=SIGKILL: the kernel kills
// it when the thread that started it ends (nativeNode.start keeps that thread alive
// until the JVM has exited). Its own process group keeps a terminal's Ctrl-C from
// reaching it before the harness does; the harness's death kills it anyway.
func guardedCommand(path string, args []string) (*exec.Cmd, func()) {
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd, func() { _ = cmd.Process.Kill() }
}
