#!/bin/bash
# Prints the path of a Cassandra home (bin/, conf/, lib/) for $CASSANDRA_VERSION, building
# it under $CQLSAFE_CACHE_DIR on first use.
#
# lib/ is what the harness's native node uses: cassandra-all:<v> and its runtime
# dependencies resolved by Maven from Maven Central (checksums checked), their SHA-256
# recorded in SHA256SUMS. This script wraps the harness for it
# (integration/harness/cmd/cassandra-home), so the scripts, the image and the harness
# share one cache and one set of checks. conf/ comes from integration/harness/native (the
# configuration the harness embeds), bin/ from scripts/cassandra/bin (the launcher
# native-node.sh and the image run).
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

home="$CASSANDRA_HOME_DIR"
if [ ! -f "$home/.complete" ]; then
  command -v mvn >/dev/null || apt_install maven
  command -v go >/dev/null || die "go is not installed (the harness fetches Cassandra)"
  java="$(java17)" || die "no Java 17 found (apt-get install openjdk-17-jre-headless)"
  log "resolving Apache Cassandra $CASSANDRA_VERSION from Maven Central"
  got="$(cd "$CQLSAFE_ROOT" && JAVA_HOME="${JAVA_HOME:-${java%/bin/java}}" CQLSAFE_CACHE_DIR="$CQLSAFE_CACHE_DIR" \
    go run ./integration/harness/cmd/cassandra-home "$CASSANDRA_VERSION")" || die "could not fetch Cassandra $CASSANDRA_VERSION"
  [ "$got" = "$home" ] || die "harness put Cassandra in $got, expected $home"
fi
# conf/ and bin/ are always refreshed from the repository (cheap; keeps edits visible).
rm -rf "${home:?}/conf" "${home:?}/bin"
cp -r "$CQLSAFE_ROOT/integration/harness/native" "$home/conf"
cp -r "$CQLSAFE_ROOT/scripts/cassandra/bin" "$home/"
printf '%s\n' "$home"
