package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid is a live process. A zombie (dead, not yet reaped — inside
// a container PID 1 may never reap it) holds no memory or ports, so it counts as dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	// The state follows the parenthesised command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func waitDead(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive %v later", pid, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestNativeNodeDiesWithTestBinary starts a native node in a child test binary, kills
// that binary with SIGKILL (no deferred Close runs, as under go test -timeout or a CI
// runner cancelling), and checks that the JVM dies with it, its CQL port closes, and
// the next Start's sweep removes its data directory.
func TestNativeNodeDiesWithTestBinary(t *testing.T) {
	if os.Getenv("HARNESS_NATIVE_CHILD") == "1" {
		return
	}
	if testing.Short() {
		t.Skip("starts a native Cassandra")
	}
	ctx := context.Background()
	if _, err := findJava(ctx, javaMajorFor(nativeVersionForTest())); err != nil {
		requireOrSkip(t, "native node: %v", err)
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		requireOrSkip(t, "native node: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNativeChild$", "-test.v", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), "HARNESS_NATIVE_CHILD=1", EnvHosts+"=", EnvPaths+"="+PathNative)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var pid int
	var hostPort, dir string
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(6 * time.Minute)
wait:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("child exited before its node was up")
			}
			if _, err := fmt.Sscanf(line, "NATIVE pid=%d host=%s dir=%s", &pid, &hostPort, &dir); err == nil {
				break wait
			}
			t.Log("child: " + line)
		case <-timeout:
			t.Fatal("child's node not up after 6 minutes")
		}
	}
	if !alive(pid) {
		t.Fatalf("JVM %d not running before the kill", pid)
	}
	if conn, err := net.DialTimeout("tcp", hostPort, 2*time.Second); err != nil {
		t.Fatalf("CQL port %s closed before the kill: %v", hostPort, err)
	} else {
		conn.Close()
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	go func() {
		for range lines {
		}
	}()
	killed := time.Now()
	waitDead(t, pid, 15*time.Second)
	// A dying JVM's group leader shows as a zombie before its other threads are gone and
	// its sockets closed: wait for the port too.
	for {
		conn, err := net.DialTimeout("tcp", hostPort, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Since(killed) > 15*time.Second {
			t.Fatalf("CQL port %s still accepts connections 15s after the test binary was killed", hostPort)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("JVM %d gone and port %s closed %v after the kill", pid, hostPort, time.Since(killed).Round(time.Millisecond))
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("data directory %s gone before the sweep (%v): the test cannot see the sweep work", dir, err)
	}
	sweepNativeDirs()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("data directory %s left after the sweep: %v", dir, err)
	}
}

func nativeVersionForTest() string {
	if v := strings.TrimSpace(os.Getenv(EnvVersion)); v != "" {
		return v
	}
	return DefaultVersion
}

func requireOrSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// TestNativeChild is the child of TestNativeNodeDiesWithTestBinary: it starts a native
// node, says where it is, and waits to be killed.
func TestNativeChild(t *testing.T) {
	if os.Getenv("HARNESS_NATIVE_CHILD") != "1" {
		t.Skip("only runs as the child of TestNativeNodeDiesWithTestBinary")
	}
	ctx := context.Background()
	n, err := Start(ctx, WithPaths(PathNative), WithProgress(func(msg string) { fmt.Println(msg) }))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("NATIVE pid=%d host=%s dir=%s\n", n.native.pid, n.native.hostPort, n.native.dir)
	select {}
}

// TestWatchdogKillsOnEOF: the /bin/sh watchdog used outside Linux kills its process
// when its stdin pipe closes — what the kernel does when the harness process dies.
func TestWatchdogKillsOnEOF(t *testing.T) {
	cmd, stop := watchdogCommand("/bin/sh", []string{"-c", "echo $$; exec sleep 300"})
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if !alive(pid) {
		t.Fatalf("sleep %d not running before stop", pid)
	}
	stop()
	waitDead(t, pid, 5*time.Second)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("watchdog shell did not exit after its process was killed")
	}
}

// TestUnavailableListsEveryPath: when nothing works, one error names each path tried,
// why it failed and what to do.
func TestUnavailableListsEveryPath(t *testing.T) {
	t.Setenv(EnvHosts, "")
	t.Setenv(EnvJavaHome, filepath.Join(t.TempDir(), "no-java"))
	ctx := context.Background()
	var progress []string
	n, err := Start(ctx, WithPaths(PathDocker, PathNative), WithImage("cqlsafe.invalid/none:0"),
		WithStartTimeout(time.Minute), WithProgress(func(m string) { progress = append(progress, m) }))
	//lint:ignore SA5001 Close is nil-safe: cleanup is registered before the error check
	defer n.Close(ctx)
	var ue *UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want *UnavailableError wrapping ErrUnavailable", err)
	}
	var paths []string
	for _, p := range ue.Tried {
		paths = append(paths, p.Path)
		if p.Reason == "" || p.Fix == "" {
			t.Errorf("path %s: reason %q, fix %q", p.Path, p.Reason, p.Fix)
		}
	}
	if got := strings.Join(paths, ","); got != EnvHosts+","+PathDocker+","+PathNative {
		t.Errorf("paths tried = %s", got)
	}
	if !strings.Contains(err.Error(), EnvJavaHome) || strings.Count(err.Error(), "->") != 3 {
		t.Errorf("error does not say what to do for each path:\n%v", err)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "trying "+PathNative) {
		t.Errorf("progress does not say which path was tried:\n%s", strings.Join(progress, "\n"))
	}
	t.Logf("%v", err)
}

// TestCassandraHomeDetectsCorruption: a cached jar that no longer matches SHA256SUMS
// makes the home be fetched again (here: fails for lack of mvn) instead of being used.
func TestCassandraHomeDetectsCorruption(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCacheDir, cache)
	home := filepath.Join(cache, "cassandra-9.9.9")
	if err := os.MkdirAll(filepath.Join(home, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cassandra-all-9.9.9.jar", "jamm-0.4.0.jar"} {
		if err := os.WriteFile(filepath.Join(home, "lib", f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".complete"), []byte("9.9.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSums(home); err != nil {
		t.Fatal(err)
	}
	got, err := CassandraHome(context.Background(), "9.9.9", nil)
	if err != nil || got != home {
		t.Fatalf("intact home: %q, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(home, "lib", "extra.jar"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := verifySums(home); err == nil {
		t.Fatal("a jar not in SHA256SUMS passed verification")
	}
	os.Remove(filepath.Join(home, "lib", "extra.jar"))
	if err := os.WriteFile(filepath.Join(home, "lib", "jamm-0.4.0.jar"), []byte("flipped"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no mvn: the re-fetch fails, visibly
	var progress []string
	_, err = CassandraHome(context.Background(), "9.9.9", func(m string) { progress = append(progress, m) })
	if !errors.Is(err, ErrNoMaven) {
		t.Fatalf("damaged home: err = %v, want ErrNoMaven from the re-fetch", err)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "damaged") {
		t.Errorf("progress does not report the damage: %q", progress)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("damaged home still there: %v", err)
	}
}

func TestSetYAML(t *testing.T) {
	in := "a: 1\n# initial_token: 0\nlisten_address: x\n"
	out := setYAML(setYAML(setYAML(in, "initial_token", "5"), "listen_address", "127.0.0.9"), "new_key", "v")
	want := "a: 1\ninitial_token: 5\nlisten_address: 127.0.0.9\nnew_key: v\n"
	if out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

// TestNativeNodeRestartedWhenUnresponsive: a native node that stops answering (its JVM
// stopped with SIGSTOP: connections are accepted by the kernel, nothing is answered) is
// replaced by Keyspace with a fresh node on the same address, its log kept; the
// keyspace Keyspace returns then takes writes and reads. A node whose JVM exited is not
// restarted.
func TestNativeNodeRestartedWhenUnresponsive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a native Cassandra")
	}
	ctx := context.Background()
	if _, err := findJava(ctx, javaMajorFor(nativeVersionForTest())); err != nil {
		requireOrSkip(t, "native node: %v", err)
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		requireOrSkip(t, "native node: %v", err)
	}
	t.Setenv(EnvHosts, "")
	n, err := Start(ctx, WithPaths(PathNative))
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	if err != nil {
		t.Fatal(err)
	}
	oldPid, hostPort := n.native.pid, n.native.hostPort
	if err := syscall.Kill(oldPid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	s, ks := n.Keyspace(t)
	t.Logf("keyspace %s after %v", ks, time.Since(t0).Round(time.Millisecond))
	if n.restarts != 1 {
		t.Fatalf("restarts = %d, want 1", n.restarts)
	}
	waitDead(t, oldPid, 15*time.Second)
	if got := n.native.hostPort; got != hostPort {
		t.Fatalf("restarted on %s, want the same address %s", got, hostPort)
	}
	kept, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("cqlsafe-hung-node-%d-*.log", os.Getpid())))
	if len(kept) != 1 {
		t.Fatalf("kept logs: %v, want one", kept)
	}
	t.Cleanup(func() { os.Remove(kept[0]) })
	if b, err := os.ReadFile(kept[0]); err != nil || !strings.Contains(string(b), "Cassandra version") {
		t.Fatalf("kept log %s (%d bytes, %v) is not the old node's log", kept[0], len(b), err)
	}
	if err := s.Query(`CREATE TABLE t (k int PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`INSERT INTO t (k, v) VALUES (1, 'after restart')`).Exec(); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := s.Query(`SELECT v FROM t WHERE k = 1`).Scan(&v); err != nil || v != "after restart" {
		t.Fatalf("read back %q, %v", v, err)
	}
	// A JVM that exited is not restarted: a crash is a finding.
	if err := syscall.Kill(n.native.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-n.native.done
	if _, err := n.restartNative(ctx); err == nil || !strings.Contains(err.Error(), "exited") || n.restarts != 1 {
		t.Fatalf("restart of an exited node: %v (restarts %d), want refused", err, n.restarts)
	}
}
