// Command release prepares a lockstep release of every cqlsafe module.
//
//	go run ./integration/cmd/release vX.Y.Z          # or scripts/release.sh vX.Y.Z
//	go run ./integration/cmd/release -proxy DIR [vX.Y.Z]
//
// The first form refuses a dirty tree or a version that is not newer than every tag,
// rewrites each go.mod's requires of the repository's modules to vX.Y.Z, commits the
// rewrite ("release vX.Y.Z") and prints the git commands that tag and push every module
// (v1.2.3 for the root, gocqlv2/v1.2.3 …). It pushes nothing.
//
// The second writes the modules as the module proxy would serve that release (default:
// the next patch version) into DIR, for GOPROXY=file://DIR: what CI's install check
// (integration/install) does. It prints each module's zip size.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cqlsafe/cqlsafe/integration/release"
)

func main() {
	proxy := flag.String("proxy", "", "write the modules as a file GOPROXY into this directory instead of preparing a release")
	root := flag.String("C", ".", "the repository root")
	noCommit := flag.Bool("no-commit", false, "rewrite the go.mod files but do not commit")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: release [-C root] [-no-commit] vX.Y.Z\n       release [-C root] -proxy DIR [vX.Y.Z]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*root, *proxy, *noCommit, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(root, proxy string, noCommit bool, args []string) error {
	if len(args) > 1 || (proxy == "" && len(args) != 1) {
		flag.Usage()
		return fmt.Errorf("release: give one version")
	}
	if proxy != "" {
		v := ""
		if len(args) == 1 {
			v = args[0]
		} else {
			tags, err := release.Tags(root)
			if err != nil {
				return err
			}
			v = release.Next(tags)
		}
		sizes, err := release.BuildProxy(root, v, proxy)
		paths := make([]string, 0, len(sizes))
		for p := range sizes {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			fmt.Printf("%s@%s\t%d bytes\n", p, v, sizes[p])
		}
		return err
	}
	v := args[0]
	tags, err := release.Prepare(root, v)
	if err != nil {
		return err
	}
	if !noCommit {
		cmd := exec.Command("git", "commit", "-a", "-q", "--allow-empty", "-m", "release "+v+": every in-repo require names "+v)
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("release: git commit: %w", err)
		}
	}
	abs, _ := filepath.Abs(root)
	fmt.Printf("# the tags of release %s, on the commit that holds the rewritten go.mod files:\n", v)
	for _, t := range tags {
		fmt.Printf("git -C %s tag -a %s -m %s\n", abs, t, "'cqlsafe "+v+"'")
	}
	fmt.Printf("git -C %s push origin HEAD %s\n", abs, strings.Join(tags, " "))
	return nil
}
