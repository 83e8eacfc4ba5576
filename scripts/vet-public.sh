#!/usr/bin/env bash
# vet-public.sh runs cqlsafe's analyzer (cqlsafevet) over public Go modules that use
# gocql, fetched through the Go module proxy into a temporary directory (nothing is
# vendored into this repository), and prints files scanned and findings per rule.
#
#   scripts/vet-public.sh                       the modules the analyzer was developed against
#   scripts/vet-public.sh --held-out            codebases it was never tuned on (kept out of
#                                               the unit tests, as a check on tuning)
#   scripts/vet-public.sh MODULE@VERSION:PKGS…  others (PKGS: package patterns, comma-separated)
#
# The findings themselves go to $OUT (default /tmp/cqlsafe-vet-public), one JSON file
# per module, for review; beside each, NAME.notes.json lists what was not analysed
# (cqlsafe vet -v: wrappers, CQL built at run time, writes executed elsewhere).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/cqlsafe-vet-public}
mkdir -p "$out"
targets=("$@")
if [ "${1:-}" = --held-out ]; then
	targets=(
		"go.temporal.io/server@v1.27.3:./common/persistence/cassandra/...,./common/persistence/nosql/nosqlplugin/cassandra/..."
		"github.com/uber/cadence@v1.3.0:./common/persistence/nosql/nosqlplugin/cassandra/...,./tools/cassandra/..."
		"github.com/cortexproject/cortex@v1.10.0:./pkg/chunk/cassandra/..."
	)
elif [ ${#targets[@]} -eq 0 ]; then
	targets=(
		"github.com/scylladb/gocqlx/v2@v2.8.0:./..."
		"github.com/scylladb/scylla-cdc-go@v1.2.1:./..."
		"github.com/jaegertracing/jaeger@v1.57.0:./plugin/storage/cassandra/...,./pkg/cassandra/..."
		"github.com/gocql/gocql@v1.7.0:./..."
	)
fi
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
(cd "$root/cmd/cqlsafe" && go build -o "$work/cqlsafevet" ./cmd/cqlsafevet && go build -o "$work/cqlsafe" .)
export GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
# Integration tests (where most CQL of a driver library lives) sit behind build tags.
tags=${TAGS:-all,integration,cassandra,unit}
printf '%-50s %6s %6s  %8s  %s\n' MODULE PKGS FILES FINDINGS NOT-ANALYSED
for t in "${targets[@]}"; do
	mod=${t%%:*}
	pkgs=${t#*:}
	dir=$(go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	src="$work/src/${mod//[\/@]/_}"
	mkdir -p "$src"
	cp -r "$dir"/. "$src"
	chmod -R u+w "$src"
	name=$(echo "${mod%@*}" | tr / _)
	IFS=, read -r -a patterns <<<"$pkgs"
	(
		cd "$src"
		go mod download >/dev/null 2>&1 || true
		# Only packages that import gocql (v1 or the apache v2 driver), gocqlx or a project's
		# own wrapper package named gocql (Temporal's, Cadence's) are of interest.
		mapfile -t list < <(go list -tags="$tags" -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' "${patterns[@]}" 2>/dev/null |
			awk '/github.com\/gocql\/gocql|cassandra-gocql-driver|gocqlx|\/gocql( |$)/ {print $1}')
		files=$(go list -tags="$tags" -f '{{len .GoFiles}} {{len .TestGoFiles}} {{len .XTestGoFiles}}' "${list[@]}" 2>/dev/null | awk '{n+=$1+$2+$3} END {print n+0}')
		go vet -tags="$tags" -vettool="$work/cqlsafevet" -json "${list[@]}" >"$out/$name.json" 2>&1 || true
		n=$(grep -c '"posn"' "$out/$name.json" || true)
		GOFLAGS="$GOFLAGS -tags=$tags" "$work/cqlsafe" vet -v --json "${list[@]}" >"$out/$name.notes.json" 2>&1 || true
		u=$(grep -c '"rule": "not-analysed"' "$out/$name.notes.json" || true)
		printf '%-50s %6s %6s  %8s  %s\n' "$mod" "${#list[@]}" "$files" "$n" "$u"
	)
done
echo
echo "findings per rule:"
for f in "$out"/*.json; do case $f in *.notes.json) ;; *) cat "$f" ;; esac; done | { grep -o '"message": "[a-z-]*:' || true; } | sed 's/"message": "//; s/:$//' | sort | uniq -c | sort -rn
echo "not analysed (cqlsafe vet -v):"
cat "$out"/*.notes.json | { grep -o '"message": "not-analysed: [^(:"]*' || true; } | sed 's/"message": "not-analysed: //; s/ *$//' | sort | uniq -c | sort -rn
echo "details: $out/*.json"
