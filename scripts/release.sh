#!/bin/bash
# release.sh vX.Y.Z — prepares a lockstep release of every module: refuses a dirty tree
# or a version that is not newer than every tag, rewrites the in-repo requires to
# vX.Y.Z, commits, and prints the tags to create and push (it pushes nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./integration/cmd/release "$@"
