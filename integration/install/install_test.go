package install

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/cqlsafe/cqlsafe/integration/release"
)

// flavour is one kind of user: the README's Install lines for it and the driver its
// application imports.
type flavour struct {
	name  string
	lines []string // shell lines, as README.md gives them
}

// readmeFlavours reads README.md's Install section: each indented block that follows
// an `<!-- install-check: NAME -->` comment is the lines a user of kind NAME runs.
func readmeFlavours(t *testing.T, readme string) []flavour {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	marker := regexp.MustCompile(`^<!-- install-check: ([a-z0-9.-]+) -->$`)
	var out []flavour
	var cur *flavour
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if m := marker.FindStringSubmatch(line); m != nil {
			out = append(out, flavour{name: m[1]})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, "    "):
			cur.lines = append(cur.lines, strings.TrimSpace(line))
		case strings.TrimSpace(line) == "" && len(cur.lines) == 0:
		default:
			cur = nil // the block ended
		}
	}
	return out
}

// TestInstallReadmeLines: README.md names an install block for every driver.
func TestInstallReadmeLines(t *testing.T) {
	got := map[string]bool{}
	for _, f := range readmeFlavours(t, "../../README.md") {
		if len(f.lines) == 0 {
			t.Errorf("install block %s has no lines", f.name)
		}
		for _, l := range f.lines {
			if !strings.HasPrefix(l, "go ") {
				t.Errorf("install block %s: %q is not a go command", f.name, l)
			}
		}
		got[f.name] = true
	}
	for _, want := range []string{"gocql", "gocqlv2", "fork-v1.15", "fork-v1.18", "gocqlx-v3"} {
		if !got[want] {
			t.Errorf("README.md has no install block %q", want)
		}
	}
}

// TestInstallFromRelease installs cqlsafe as a user does, from a release: every module
// of the repository zipped as the module proxy serves it, at a pre-release of the
// version a release would tag next, into a file GOPROXY; then, per kind of user, a fresh application module
// runs the README's Install lines, builds, and runs one Policy.Exec and one
// overwrite.Row against Cassandra. It fails when a require would need a `replace` or
// names a version no tag publishes, when a zip is over release.MaxZipBytes, or when an
// application's build holds the other driver.
func TestInstallFromRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds applications from a release: not in -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tags, err := release.Tags(root)
	if err != nil {
		t.Fatal(err)
	}
	// A pre-release of the version a release would tag next, unique to this run: the
	// module cache and the build cache keep what they saw of a module version, so the
	// same version built from an earlier tree would be used instead of this one.
	// (Nanoseconds as one number: semver forbids a numeric identifier with a leading 0.)
	version := fmt.Sprintf("%s-install.%d", release.Next(tags), time.Now().UnixNano())
	proxy := t.TempDir()
	sizes, err := release.BuildProxy(root, version, proxy)
	if err != nil {
		t.Fatal(err)
	}
	for p, n := range sizes {
		t.Logf("%s@%s zip: %d bytes", p, version, n)
	}
	upstream := strings.TrimSpace(goEnv(t, goBin, "GOPROXY"))
	if upstream == "" || upstream == "off" {
		upstream = "https://proxy.golang.org"
	}
	// The user's environment: no workspace, the release first, the module proxy after it
	// for the drivers. Our modules are not in the checksum database (a real tag would be).
	env := append(os.Environ(),
		"GOWORK=off",
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+upstream,
		"GONOSUMDB=github.com/cqlsafe/cqlsafe",
		"GOFLAGS=-buildvcs=false",
	)
	node.Require(t)
	for _, f := range readmeFlavours(t, filepath.Join(root, "README.md")) {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			src, err := os.ReadFile(appFor(f.name))
			if err != nil {
				t.Fatal(err)
			}
			other := "github.com/apache/cassandra-gocql-driver/v2"
			if f.name == "gocqlv2" {
				src = bytes.ReplaceAll(src, []byte(`"github.com/gocql/gocql"`), []byte(`gocql "github.com/apache/cassandra-gocql-driver/v2"`))
				src = bytes.ReplaceAll(src, []byte(`"github.com/cqlsafe/cqlsafe/`), []byte(`"github.com/cqlsafe/cqlsafe/gocqlv2/`))
				other = "github.com/gocql/gocql"
			}
			if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, dir, env, goBin, "mod", "init", "example.com/app")
			for _, l := range f.lines {
				args := strings.Fields(l)
				run(t, dir, env, goBin, args[1:]...)
			}
			run(t, dir, env, goBin, "build", "-o", "app", ".")
			gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
			mf, err := modfile.Parse("go.mod", gomod, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The only replace a user has is their driver's: gocql by the ScyllaDB fork.
			fork := false
			for _, r := range mf.Replace {
				if r.Old.Path == "github.com/gocql/gocql" && r.New.Path == "github.com/scylladb/gocql" && r.New.Version != "" {
					fork = true
					continue
				}
				t.Errorf("the application needed a replace: %s => %s %s", r.Old.Path, r.New.Path, r.New.Version)
			}
			if wantFork := strings.HasPrefix(f.name, "fork") || strings.HasPrefix(f.name, "gocqlx"); fork != wantFork {
				t.Errorf("%s: builds with the fork %v, want %v:\n%s", f.name, fork, wantFork, gomod)
			}
			if !bytes.Contains(gomod, []byte(version)) {
				t.Errorf("go.mod does not require the release %s:\n%s", version, gomod)
			}
			for _, args := range [][]string{{"list", "-deps", "."}, {"mod", "graph"}} {
				if out := run(t, dir, env, goBin, args...); strings.Contains(out, other) {
					t.Errorf("go %s: the %s application's build holds %s", strings.Join(args, " "), f.name, other)
				}
			}
			checkApp(t, dir, env)
		})
	}
}

// checkApp runs the built application against Cassandra and reads back what it wrote:
// the Policy.Exec row, and the overwrite.Row row at its timestamp N+1 with the unset
// column NULL.
func checkApp(t *testing.T, dir string, env []string) {
	t.Helper()
	s, ks := node.Keyspace(t)
	if err := s.Query(`CREATE TABLE install_kv (id int PRIMARY KEY, v text, n text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "app"))
	cmd.Env = slices.Concat(env, []string{"CQLSAFE_CASSANDRA_HOSTS=" + strings.Join(node.Hosts(), ","), "CQLSAFE_KEYSPACE=" + ks})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("application: %v\n%s", err, out)
	}
	var n int64
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "row %d", &n); err != nil {
		t.Fatalf("application printed %q", out)
	}
	var v, nn string
	if err := s.Query(`SELECT v, n FROM install_kv WHERE id = 1`).Scan(&v, &nn); err != nil || v != "exec" || nn != "n" {
		t.Errorf("Policy.Exec row: v=%q n=%q err=%v; want exec, n", v, nn, err)
	}
	var wt int64
	var nPtr *string
	if err := s.Query(`SELECT v, n, WRITETIME(v) FROM install_kv WHERE id = 2`).Scan(&v, &nPtr, &wt); err != nil {
		t.Fatalf("overwrite.Row row: %v", err)
	}
	if v != "row" || nPtr != nil || wt != n+1 {
		t.Errorf("overwrite.Row row: v=%q n=%v WRITETIME(v)=%d; want row, NULL, %s", v, nPtr, wt, strconv.FormatInt(n+1, 10))
	}
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

func goEnv(t *testing.T, goBin, key string) string {
	t.Helper()
	out, err := exec.Command(goBin, "env", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// appFor is the application a kind of user builds: a gocqlx v3 model's, or the plain one
// (its imports rewritten for the v2 driver).
func appFor(flavour string) string {
	if flavour == "gocqlx-v3" {
		return "testdata/gocqlx3/main.go"
	}
	return "testdata/app/main.go"
}
