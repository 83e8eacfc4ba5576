# shellcheck shell=bash
# Shared settings for the scripts that fetch, start and package Apache Cassandra.
# Sourced, not run. Everything is overridable from the environment.
# The settings are read by the scripts that source this file:
# shellcheck disable=SC2034

set -euo pipefail

CQLSAFE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# CQLSAFE_CASSANDRA_VERSION picks it, as for the harness; 5.0.9 (the harness's
# DefaultVersion) is the latest 5.0 patch release Maven Central serves.
CASSANDRA_VERSION="${CASSANDRA_VERSION:-${CQLSAFE_CASSANDRA_VERSION:-5.0.9}}"
# Downloads and the built Cassandra home are reused between runs from here.
CQLSAFE_CACHE_DIR="${CQLSAFE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cqlsafe}"
CASSANDRA_HOME_DIR="$CQLSAFE_CACHE_DIR/cassandra-$CASSANDRA_VERSION"
# The image testcontainers starts when no registry is reachable.
CQLSAFE_LOCAL_IMAGE="${CQLSAFE_LOCAL_IMAGE:-cqlsafe/cassandra:$CASSANDRA_VERSION-local}"
# Pinned: the static checker CI runs (from the Go module proxy).
STATICCHECK_VERSION="${STATICCHECK_VERSION:-v0.8.2}"
# Pinned: the plugin that resolves Cassandra from Maven Central.
MAVEN_DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# java17 prints the path of a Java 17 binary. Cassandra 5.0 does not run on newer JDKs,
# so the machine's default java is never trusted.
java17() {
  local c
  for c in "${CASSANDRA_JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-arm64 /usr/lib/jvm/java-17-openjdk /usr/lib/jvm/temurin-17-jdk-amd64; do
    if [ -z "$c" ] || [ ! -x "$c/bin/java" ]; then continue; fi
    if "$c/bin/java" -version 2>&1 | grep -q 'version "17\.'; then
      printf '%s\n' "$c/bin/java"; return 0
    fi
  done
  return 1
}

# as_root runs a command as root (directly when already root).
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
