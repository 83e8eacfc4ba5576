// Package release publishes cqlsafe's modules in lockstep: every module of the
// repository is tagged at one version, and every in-repo require names that version.
//
// A user's `go get` resolves a module from its tag alone: Go ignores the `replace`
// directives of a dependency's go.mod, so a require of an in-repo module must name a
// version that is tagged. The go.mod files on main keep their `replace` directives (they
// serve a checkout, and go.work does too); a release rewrites the in-repo requires to
// the version being tagged, as opentelemetry-go's release tool does.
//
// Two uses:
//
//   - Prepare (the release command, scripts/release.sh vX.Y.Z): refuses a dirty tree or
//     a version that is not newer than every tag, rewrites the requires, and returns the
//     tags to create on the commit that holds them.
//   - BuildProxy (CI's install check): the same rewrite on a copy of the tracked files,
//     each module zipped as the module proxy serves it (golang.org/x/mod/zip) into a
//     directory a GOPROXY=file://… URL reads, so a fresh application can `go get` the
//     release before it exists.
package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// MaxZipBytes is the largest module zip a release may publish: every user downloads it.
const MaxZipBytes = 4 << 20

// Module is one module of the repository.
type Module struct {
	Path string // module path, e.g. github.com/cqlsafe/cqlsafe/gocqlv2
	Dir  string // directory relative to the repository root, "." for the root
}

// Tag is the git tag that publishes m at version v: "v1.2.3" for the root module,
// "gocqlv2/v1.2.3" for the one in gocqlv2/.
func (m Module) Tag(v string) string {
	if m.Dir == "." {
		return v
	}
	return filepath.ToSlash(m.Dir) + "/" + v
}

// Modules lists the repository's modules: the go.work file's `use` directories.
func Modules(root string) ([]Module, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	var mods []Module
	for _, u := range wf.Use {
		dir := filepath.Clean(u.Path)
		data, err := os.ReadFile(filepath.Join(root, dir, "go.mod"))
		if err != nil {
			return nil, fmt.Errorf("release: module in go.work: %w", err)
		}
		p := modfile.ModulePath(data)
		if p == "" {
			return nil, fmt.Errorf("release: %s/go.mod names no module", dir)
		}
		mods = append(mods, Module{Path: p, Dir: dir})
	}
	if len(mods) == 0 {
		return nil, errors.New("release: go.work uses no module")
	}
	// A go.mod that go.work does not use would be left out of its parent's zip and
	// never published.
	if out, err := git(root, "ls-files", "--", "go.mod", "*/go.mod"); err == nil {
		for _, f := range strings.Fields(out) {
			dir := filepath.Dir(filepath.FromSlash(f))
			if !slices.ContainsFunc(mods, func(m Module) bool { return m.Dir == dir }) {
				return nil, fmt.Errorf("release: %s is not used by go.work: it would not be published", f)
			}
		}
	}
	return mods, nil
}

// Rewrite sets every require of a module in mods to version v in the go.mod text data
// (the go.mod of a module in the repository) and returns the new text. Replace
// directives are left as they are: they matter only to a checkout.
func Rewrite(name string, data []byte, mods []Module, v string) ([]byte, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	for _, r := range f.Require {
		if isIn(mods, r.Mod.Path) && r.Mod.Version != v {
			if err := f.AddRequire(r.Mod.Path, v); err != nil {
				return nil, fmt.Errorf("release: %s: %w", name, err)
			}
		}
	}
	f.Cleanup()
	return f.Format()
}

// CheckRequires reports a go.mod (text data) that requires a module of mods at any
// version but v: a user's `go get` would look for a tag that does not exist.
func CheckRequires(name string, data []byte, mods []Module, v string) error {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	for _, r := range f.Require {
		if isIn(mods, r.Mod.Path) && r.Mod.Version != v {
			return fmt.Errorf("release: %s requires %s %s, not the release's %s", name, r.Mod.Path, r.Mod.Version, v)
		}
		if strings.HasPrefix(r.Mod.Path, "github.com/cqlsafe/cqlsafe") && !isIn(mods, r.Mod.Path) {
			return fmt.Errorf("release: %s requires %s, which is no module of the repository", name, r.Mod.Path)
		}
	}
	return nil
}

func isIn(mods []Module, p string) bool {
	return slices.ContainsFunc(mods, func(m Module) bool { return m.Path == p })
}

// Tags lists the repository's release tags (vX.Y.Z and dir/vX.Y.Z).
func Tags(root string) ([]string, error) {
	out, err := git(root, "tag", "--list")
	if err != nil {
		return nil, err
	}
	var tags []string
	for _, t := range strings.Fields(out) {
		if semver.IsValid(path.Base(t)) {
			tags = append(tags, t)
		}
	}
	return tags, nil
}

// Latest is the highest version among tags ("" when there is none).
func Latest(tags []string) string {
	latest := ""
	for _, t := range tags {
		if v := path.Base(t); semver.IsValid(v) && (latest == "" || semver.Compare(v, latest) > 0) {
			latest = v
		}
	}
	return latest
}

// Next is the version a release would tag next: v0.1.0 when nothing is tagged, else
// the latest version with its patch number raised.
func Next(tags []string) string {
	latest := Latest(tags)
	if latest == "" {
		return "v0.1.0"
	}
	var major, minor, patch int
	if _, err := fmt.Sscanf(semver.Canonical(latest), "v%d.%d.%d", &major, &minor, &patch); err != nil {
		return "v0.1.0"
	}
	if semver.Prerelease(latest) != "" {
		return fmt.Sprintf("v%d.%d.%d", major, minor, patch) // v1.2.3-rc.1 → v1.2.3
	}
	return fmt.Sprintf("v%d.%d.%d", major, minor, patch+1)
}

// CheckVersion refuses a version that is not canonical semver (vMAJOR.MINOR.PATCH with
// an optional pre-release, no build metadata) or not newer than every tag.
func CheckVersion(v string, tags []string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v || semver.Build(v) != "" {
		return fmt.Errorf("release: %q is not a version vMAJOR.MINOR.PATCH[-PRERELEASE]", v)
	}
	if semver.Major(v) != "v0" && semver.Major(v) != "v1" {
		return fmt.Errorf("release: %s needs /%s module paths, which the modules do not have", v, semver.Major(v))
	}
	if latest := Latest(tags); latest != "" && semver.Compare(v, latest) <= 0 {
		return fmt.Errorf("release: %s is not newer than the latest tag %s", v, latest)
	}
	return nil
}

// Prepare readies the repository at root for release v: it refuses a tree with
// uncommitted changes or untracked files and a version that is not newer than every
// tag, then rewrites each module's in-repo requires to v in place. It returns the tags
// to create, one per module, on the commit that records the rewrite.
func Prepare(root, v string) ([]string, error) {
	status, err := git(root, "status", "--porcelain")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(status) != "" {
		return nil, fmt.Errorf("release: the tree has uncommitted changes:\n%s", status)
	}
	tags, err := Tags(root)
	if err != nil {
		return nil, err
	}
	if err := CheckVersion(v, tags); err != nil {
		return nil, err
	}
	mods, err := Modules(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mods {
		name := filepath.Join(root, m.Dir, "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		nd, err := Rewrite(name, data, mods, v)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(nd, data) {
			if err := os.WriteFile(name, nd, 0o644); err != nil {
				return nil, fmt.Errorf("release: %w", err)
			}
		}
		out = append(out, m.Tag(v))
	}
	return out, nil
}

// BuildProxy writes, into dir, every module of the repository at root as the module
// proxy would serve release v: the tracked files as they are in the work tree (a clean
// clone's are the commit's), each
// go.mod's in-repo requires rewritten to v, zipped with golang.org/x/mod/zip. A
// GOPROXY=file://dir URL then serves them. It returns each module's zip size and fails
// on a zip over MaxZipBytes or a require of an in-repo module at another version.
func BuildProxy(root, v, dir string) (map[string]int64, error) {
	mods, err := Modules(root)
	if err != nil {
		return nil, err
	}
	src, err := os.MkdirTemp("", "cqlsafe-release-*")
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer os.RemoveAll(src)
	if err := copyTracked(root, src); err != nil {
		return nil, err
	}
	sizes := map[string]int64{}
	for _, m := range mods {
		name := filepath.Join(src, m.Dir, "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		if data, err = Rewrite(name, data, mods, v); err != nil {
			return nil, err
		}
		if err := CheckRequires(filepath.Join(m.Dir, "go.mod"), data, mods, v); err != nil {
			return nil, err
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		n, err := writeModule(dir, m, v, filepath.Join(src, m.Dir), data)
		if err != nil {
			return nil, err
		}
		sizes[m.Path] = n
		if n > MaxZipBytes {
			return sizes, fmt.Errorf("release: %s's zip is %d bytes, over %d", m.Path, n, MaxZipBytes)
		}
	}
	return sizes, nil
}

// writeModule lays out one module version as the GOPROXY protocol serves it:
// <escaped path>/@v/{list,<v>.info,<v>.mod,<v>.zip}.
func writeModule(dir string, m Module, v, srcDir string, goMod []byte) (int64, error) {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return 0, fmt.Errorf("release: %w", err)
	}
	vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return 0, fmt.Errorf("release: %w", err)
	}
	zf, err := os.Create(filepath.Join(vdir, v+".zip"))
	if err != nil {
		return 0, fmt.Errorf("release: %w", err)
	}
	defer zf.Close()
	if err := modzip.CreateFromDir(zf, module.Version{Path: m.Path, Version: v}, srcDir); err != nil {
		return 0, fmt.Errorf("release: zip %s: %w", m.Path, err)
	}
	st, err := zf.Stat()
	if err != nil {
		return 0, fmt.Errorf("release: %w", err)
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{v, time.Now().UTC().Truncate(time.Second)})
	for name, data := range map[string][]byte{"list": []byte(v + "\n"), v + ".info": info, v + ".mod": goMod} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return 0, fmt.Errorf("release: %w", err)
		}
	}
	return st.Size(), zf.Close()
}

// copyTracked copies the files git tracks under root (as they are in the work tree;
// deleted ones are skipped) into dst: what a tag of the work tree would publish.
func copyTracked(root, dst string) error {
	out, err := git(root, "ls-files", "-z")
	if err != nil {
		return err
	}
	for _, name := range strings.Split(out, "\x00") {
		if name == "" {
			continue
		}
		from := filepath.Join(root, filepath.FromSlash(name))
		st, err := os.Lstat(from)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if !st.Mode().IsRegular() {
			continue // the module zip format holds regular files only
		}
		data, err := os.ReadFile(from)
		if err != nil {
			return fmt.Errorf("release: %w", err)
		}
		to := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if err := os.WriteFile(to, data, st.Mode().Perm()); err != nil {
			return fmt.Errorf("release: %w", err)
		}
	}
	return nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("release: git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
