#!/bin/bash
# fork-work.sh VERSION — prints the path of a go.work that builds this checkout with the
# ScyllaDB fork of gocql (github.com/scylladb/gocql VERSION) under gocql's import path,
# as gocqlx users run it: the repository's go.work plus the replace they put in go.mod.
#   GOWORK="$(scripts/fork-work.sh v1.15.1)" go test github.com/cqlsafe/cqlsafe/...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${1:?usage: fork-work.sh VERSION (e.g. v1.15.1)}"
# One directory per checkout and version: another checkout's go.work names its own tree.
dir="${TMPDIR:-/tmp}/cqlsafe-fork-$(printf '%s' "$root" | cksum | cut -d' ' -f1)-$version"
mkdir -p "$dir"
# go.work resolves its use directories relative to itself: make them absolute.
sed -E "s#^(\s*)\.\$#\1$root#; s#^(\s*)\./([^ ]+)\$#\1$root/\2#" "$root/go.work" > "$dir/go.work"
[ -f "$root/go.work.sum" ] && cp "$root/go.work.sum" "$dir/go.work.sum"
printf '\nreplace github.com/gocql/gocql => github.com/scylladb/gocql %s\n' "$version" >> "$dir/go.work"
printf '%s\n' "$dir/go.work"
