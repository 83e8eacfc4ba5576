#!/usr/bin/env bash
# vet-public.sh runs cqlsafe's analyzer (cqlsafevet) over public Go modules that use
# gocql, fetched through the Go module proxy into a temporary directory (nothing is
# vendored into this repository), and prints files scanned and findings per rule.
#
#   scripts/vet-public.sh                       the default modules below
#   scripts/vet-public.sh MODULE@VERSION:PKGS…  others (PKGS: package patterns, comma-separated)
#
# The findings themselves go to $OUT (default /tmp/cqlsafe-vet-public), one JSON file
# per module, for review.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/cqlsafe-vet-public}
mkdir -p "$out"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(
		"github.com/scylladb/gocqlx/v2@v2.8.0:./..."
		"github.com/scylladb/scylla-cdc-go@v1.2.1:./..."
		"github.com/jaegertracing/jaeger@v1.57.0:./plugin/storage/cassandra/...,./pkg/cassandra/..."
		"github.com/gocql/gocql@v1.7.0:./..."
	)
fi
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
(cd "$root/cmd/cqlsafe" && go build -o "$work/cqlsafevet" ./cmd/cqlsafevet)
export GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
# Integration tests (where most CQL of a driver library lives) sit behind build tags.
tags=${TAGS:-all,integration,cassandra,unit}
printf '%-50s %6s %6s  %s\n' MODULE PKGS FILES FINDINGS
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
		# Only packages that import gocql (directly) are of interest.
		mapfile -t list < <(go list -tags="$tags" -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' "${patterns[@]}" 2>/dev/null |
			awk '/github.com\/gocql\/gocql|gocqlx/ {print $1}')
		files=$(go list -tags="$tags" -f '{{len .GoFiles}} {{len .TestGoFiles}} {{len .XTestGoFiles}}' "${list[@]}" 2>/dev/null | awk '{n+=$1+$2+$3} END {print n+0}')
		go vet -tags="$tags" -vettool="$work/cqlsafevet" -json "${list[@]}" >"$out/$name.json" 2>&1 || true
		n=$(grep -c '"posn"' "$out/$name.json" || true)
		printf '%-50s %6s %6s  %s\n' "$mod" "${#list[@]}" "$files" "$n"
	)
done
echo
echo "findings per rule:"
cat "$out"/*.json | grep -o '"message": "[a-z-]*:' | sed 's/"message": "//; s/:$//' | sort | uniq -c | sort -rn
echo "details: $out/*.json"
