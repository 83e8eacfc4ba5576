#!/bin/bash
# Prints the path of a Cassandra home (bin/, conf/, lib/) for $CASSANDRA_VERSION, building
# it under $CQLSAFE_CACHE_DIR on first use.
#
# Source: Maven Central only. The binary tarball
# org.apache.cassandra:apache-cassandra:<v>:tar.gz:bin is used when Central has it; Central
# does not publish it for 5.0.x, so then cassandra-all:<v> and its runtime dependencies are
# resolved by Maven and started as org.apache.cassandra.service.CassandraDaemon by our own
# launcher (scripts/cassandra/bin). Either way conf/ and bin/ come from this repository.
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

home="$CASSANDRA_HOME_DIR"
stamp="$home/.complete"
if [ ! -f "$stamp" ]; then
  command -v mvn >/dev/null || apt_install maven
  java="$(java17)" || die "no Java 17 found (apt-get install openjdk-17-jre-headless)"
  export JAVA_HOME="${java%/bin/java}"
  mkdir -p "$CQLSAFE_CACHE_DIR"
  tmp="$(mktemp -d "$CQLSAFE_CACHE_DIR/.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/lib"
  log "resolving Apache Cassandra $CASSANDRA_VERSION from Maven Central"
  if mvn -q -B "$MAVEN_DEPENDENCY_PLUGIN:copy" \
      -Dartifact="org.apache.cassandra:apache-cassandra:$CASSANDRA_VERSION:tar.gz:bin" \
      -DoutputDirectory="$tmp/dl" >"$tmp/mvn-tarball.log" 2>&1; then
    log "using the binary tarball"
    tar -xzf "$tmp"/dl/*.tar.gz -C "$tmp/dl"
    cp "$tmp"/dl/apache-cassandra-*/lib/*.jar "$tmp/lib/"
  else
    log "no binary tarball for $CASSANDRA_VERSION on Maven Central; using cassandra-all and its dependencies"
    cat > "$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.cqlsafe</groupId><artifactId>cassandra-home</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId><artifactId>cassandra-all</artifactId>
      <version>$CASSANDRA_VERSION</version>
    </dependency>
  </dependencies>
</project>
POM
    (cd "$tmp" && mvn -q -B "$MAVEN_DEPENDENCY_PLUGIN:copy-dependencies" \
        -DincludeScope=runtime -DoutputDirectory="$tmp/lib") >"$tmp/mvn-all.log" 2>&1 \
      || { cat "$tmp/mvn-all.log" >&2; die "maven could not resolve cassandra-all:$CASSANDRA_VERSION"; }
    # Native helpers for other platforms are dead weight in a Linux image.
    rm -f "$tmp"/lib/*-osx-*.jar "$tmp"/lib/*-windows-*.jar "$tmp"/lib/*-riscv64.jar
  fi
  # A usable home has Cassandra's own jar, jamm (the memory meter the JVM loads as an
  # agent) and its few hundred dependencies.
  compgen -G "$tmp/lib/cassandra-all-*.jar" >/dev/null || compgen -G "$tmp/lib/apache-cassandra-*.jar" >/dev/null \
    || die "resolved libraries have no Cassandra jar"
  compgen -G "$tmp/lib/jamm-*.jar" >/dev/null || die "resolved libraries have no jamm jar"
  jars=$(find "$tmp/lib" -name '*.jar' | wc -l)
  [ "$jars" -ge 50 ] || die "resolved libraries look incomplete: $jars jars"
  rm -rf "$home"
  mkdir -p "$home"
  mv "$tmp/lib" "$home/lib"
  printf '%s\n' "$CASSANDRA_VERSION" > "$stamp"
fi
# conf/ and bin/ are always refreshed from the repository (cheap; keeps edits visible).
rm -rf "${home:?}/conf" "${home:?}/bin"
cp -r "$CQLSAFE_ROOT/scripts/cassandra/conf" "$CQLSAFE_ROOT/scripts/cassandra/bin" "$home/"
printf '%s\n' "$home"
