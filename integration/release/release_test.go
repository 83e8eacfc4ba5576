package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository with two modules (root and sub/) in a workspace, sub
// requiring the root at v0.0.0 through a replace, and commits it.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.work":    "go 1.24\n\nuse (\n\t.\n\t./sub\n)\n",
		"go.mod":     "module example.com/m\n\ngo 1.24\n",
		"a.go":       "package m\n",
		"sub/go.mod": "module example.com/m/sub\n\ngo 1.24\n\nrequire example.com/m v0.0.0\n\nreplace example.com/m => ..\n",
		"sub/b.go":   "package sub\n\nimport _ \"example.com/m\"\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, dir, "init", "-q")
	gitT(t, dir, "add", ".")
	gitT(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
	return dir
}

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestReleasePrepareRewritesRequires(t *testing.T) {
	dir := repo(t)
	tags, err := Prepare(dir, "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tags, " ") != "v0.2.0 sub/v0.2.0" {
		t.Errorf("tags %v, want [v0.2.0 sub/v0.2.0]", tags)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "sub/go.mod"))
	if !strings.Contains(string(data), "require example.com/m v0.2.0") {
		t.Errorf("sub/go.mod not rewritten:\n%s", data)
	}
	if !strings.Contains(string(data), "replace example.com/m => ..") {
		t.Errorf("sub/go.mod lost its replace (a checkout needs it):\n%s", data)
	}
}

func TestReleasePrepareRefusesDirtyTree(t *testing.T) {
	dir := repo(t)
	if err := os.WriteFile(filepath.Join(dir, "c.go"), []byte("package m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(dir, "v0.2.0"); err == nil || !strings.Contains(err.Error(), "uncommitted") {
		t.Errorf("untracked file: err %v, want uncommitted changes", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "sub/go.mod"))
	if !strings.Contains(string(data), "v0.0.0") {
		t.Errorf("a refused release rewrote sub/go.mod:\n%s", data)
	}
}

func TestReleasePrepareRefusesOlderVersion(t *testing.T) {
	dir := repo(t)
	gitT(t, dir, "tag", "sub/v0.3.0")
	for _, v := range []string{"v0.3.0", "v0.2.9", "v0.3.0-rc.1", "0.4.0", "v0.4", "v0.4.0+meta", "latest", "v2.0.0"} {
		if _, err := Prepare(dir, v); err == nil {
			t.Errorf("Prepare(%q) with sub/v0.3.0 tagged: no error", v)
		}
	}
	if _, err := Prepare(dir, "v0.3.1"); err != nil {
		t.Errorf("Prepare(v0.3.1): %v", err)
	}
}

func TestReleaseNext(t *testing.T) {
	for _, c := range []struct {
		tags []string
		want string
	}{
		{nil, "v0.1.0"},
		{[]string{"v0.1.0", "gocqlv2/v0.1.0"}, "v0.1.1"},
		{[]string{"v0.1.0", "sub/v0.2.3"}, "v0.2.4"},
		{[]string{"v1.0.0-rc.1"}, "v1.0.0"},
	} {
		if got := Next(c.tags); got != c.want {
			t.Errorf("Next(%v) = %s, want %s", c.tags, got, c.want)
		}
	}
}

// TestReleaseCheckRequires: a require of an in-repo module at a version the release does
// not tag is what made `go get` fail (internal/core v0.0.0).
func TestReleaseCheckRequires(t *testing.T) {
	mods := []Module{{Path: "example.com/m", Dir: "."}, {Path: "example.com/m/sub", Dir: "sub"}}
	bad := []byte("module example.com/m/sub\n\ngo 1.24\n\nrequire example.com/m v0.0.0\n")
	if err := CheckRequires("sub/go.mod", bad, mods, "v0.1.0"); err == nil {
		t.Error("a require at v0.0.0 passed for release v0.1.0")
	}
	good, err := Rewrite("sub/go.mod", bad, mods, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckRequires("sub/go.mod", good, mods, "v0.1.0"); err != nil {
		t.Error(err)
	}
}

func TestReleaseBuildProxy(t *testing.T) {
	dir := repo(t)
	out := t.TempDir()
	sizes, err := BuildProxy(dir, "v0.1.0", out)
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 2 {
		t.Errorf("sizes %v, want two modules", sizes)
	}
	mod, err := os.ReadFile(filepath.Join(out, "example.com/m/sub/@v/v0.1.0.mod"))
	if err != nil || !strings.Contains(string(mod), "require example.com/m v0.1.0") {
		t.Errorf("sub's .mod: %s, %v", mod, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "sub/go.mod"))
	if !strings.Contains(string(data), "v0.0.0") {
		t.Errorf("BuildProxy changed the work tree's go.mod:\n%s", data)
	}
}
