#!/bin/bash
# A native Apache Cassandra node on loopback, for machines without Docker.
#
#   scripts/native-node.sh start      fetch (cached), configure, start, wait until CQL answers
#   scripts/native-node.sh stop       stop it and wait for the process to end
#   scripts/native-node.sh status     exit 0 when CQL answers
#   scripts/native-node.sh nodetool … run nodetool against it (e.g. flush ks table)
#   scripts/native-node.sh wipe       stop and delete its data
#   scripts/native-node.sh pid        print the node's process id (exit 1 when not running)
#
# Settings (environment): CQLSAFE_NODE_NAME (node1), CQLSAFE_NODE_ADDRESS (127.0.0.1),
# CQLSAFE_NODE_PORT (9042), CQLSAFE_NODE_JMX_PORT (7199), CQLSAFE_NODE_SEEDS (the address),
# CQLSAFE_NODE_TOKEN (0), MAX_HEAP_SIZE (1G), HEAP_NEWSIZE (200M),
# CQLSAFE_NODE_TIMEOUT (seconds to wait for CQL, 180).
# Prints the contact point host:port on stdout after start.
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

name="${CQLSAFE_NODE_NAME:-node1}"
addr="${CQLSAFE_NODE_ADDRESS:-127.0.0.1}"
port="${CQLSAFE_NODE_PORT:-9042}"
jmx="${CQLSAFE_NODE_JMX_PORT:-7199}"
dir="$CQLSAFE_CACHE_DIR/nodes/$name"
pidfile="$dir/cassandra.pid"

case "$addr" in 127.*|localhost) ;; *) die "refusing non-loopback address $addr" ;; esac

# cql_answers sends a CQL OPTIONS frame (protocol v4) and checks for a SUPPORTED reply:
# the node's native transport is up and speaking CQL, not just a port that is open.
cql_answers() {
  local reply
  # shellcheck disable=SC2016 # $0 and $1 expand in the inner shell
  reply="$(timeout 3 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "\x04\x00\x00\x00\x05\x00\x00\x00\x00" >&3
    head -c 5 <&3 | od -An -tx1' "$addr" "$port" 2>/dev/null)" || return 1
  [ "$(printf '%s' "$reply" | tr -d ' \n')" = "8400000006" ]
}

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
  if running && cql_answers; then log "$name already running"; printf '%s:%s\n' "$addr" "$port"; return; fi
  local home java t0
  t0=$(date +%s)
  home="$("$CQLSAFE_ROOT/scripts/fetch-cassandra.sh")"
  java="$(java17)" || die "no Java 17 found (apt-get install openjdk-17-jre-headless)"
  mkdir -p "$dir"
  rm -rf "$dir/conf"; cp -r "$home/conf" "$dir/conf"
  CASSANDRA_CONF="$dir/conf" CASSANDRA_DATA_DIR="$dir/data" \
    CASSANDRA_LISTEN_ADDRESS="$addr" CASSANDRA_RPC_ADDRESS="$addr" \
    CASSANDRA_SEEDS="${CQLSAFE_NODE_SEEDS:-$addr}" CASSANDRA_NATIVE_PORT="$port" \
    CASSANDRA_INITIAL_TOKEN="${CQLSAFE_NODE_TOKEN:-0}" CASSANDRA_NUM_TOKENS=1 \
    "$home/bin/cassandra-configure"
  log "starting $name on $addr:$port (java: $java)"
  CASSANDRA_CONF="$dir/conf" CASSANDRA_JMX_PORT="$jmx" CASSANDRA_LOG_DIR="$dir/logs" \
    CASSANDRA_STORAGE_DIR="$dir/data" JAVA="$java" \
    MAX_HEAP_SIZE="${MAX_HEAP_SIZE:-1G}" HEAP_NEWSIZE="${HEAP_NEWSIZE:-200M}" \
    JVM_EXTRA_OPTS="${JVM_EXTRA_OPTS:-} -Dcassandra.ring_delay_ms=1000" \
    setsid nohup "$home/bin/cassandra" -f > "$dir/stdout.log" 2>&1 < /dev/null &
  echo $! > "$pidfile"
  local deadline=$(( t0 + ${CQLSAFE_NODE_TIMEOUT:-180} ))
  until cql_answers; do
    running || { tail -n 40 "$dir/stdout.log" >&2; die "$name exited during start"; }
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 40 "$dir/stdout.log" >&2; die "$name: CQL did not answer in time"; }
    sleep 1
  done
  log "$name answers CQL after $(( $(date +%s) - t0 ))s"
  printf '%s:%s\n' "$addr" "$port"
}

stop() {
  running || { rm -f "$pidfile"; return 0; }
  local pid; pid="$(cat "$pidfile")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$pidfile"
  log "$name stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) cql_answers ;;
  pid) running && cat "$pidfile" ;;
  nodetool)
    shift
    home="$("$CQLSAFE_ROOT/scripts/fetch-cassandra.sh")"
    CASSANDRA_CONF="$dir/conf" CASSANDRA_JMX_PORT="$jmx" CASSANDRA_STORAGE_DIR="$dir/data" \
      JAVA="$(java17)" "$home/bin/nodetool" "$@" ;;
  wipe) stop; rm -rf "$dir" ;;
  *) echo "usage: $0 start|stop|status|pid|nodetool ARGS…|wipe" >&2; exit 2 ;;
esac
