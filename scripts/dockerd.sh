#!/bin/bash
# Makes sure a Docker Engine answers on this machine: installs Debian's docker.io when
# missing and starts dockerd in the background when it is not running.
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

if docker info >/dev/null 2>&1; then exit 0; fi
command -v dockerd >/dev/null || apt_install docker.io
command -v dockerd >/dev/null || die "dockerd not found after installing docker.io"
log "starting dockerd"
logf="${CQLSAFE_CACHE_DIR}/dockerd.log"
mkdir -p "$CQLSAFE_CACHE_DIR"
as_root setsid nohup dockerd >"$logf" 2>&1 </dev/null &
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { log "dockerd is up"; exit 0; }
  sleep 1
done
tail -n 30 "$logf" >&2
die "dockerd did not come up"
