#!/bin/bash
# Entrypoint of cqlsafe's local Cassandra image. Like the official image's, it fills in
# cassandra.yaml from CASSANDRA_* variables (SEEDS, CLUSTER_NAME, NUM_TOKENS,
# LISTEN/BROADCAST/RPC/BROADCAST_RPC addresses, ENDPOINT_SNITCH, DC, RACK) and honours
# MAX_HEAP_SIZE, HEAP_NEWSIZE and JVM_OPTS, then runs Cassandra in the foreground.
set -euo pipefail

if [ "${1:-}" = "-f" ] || [ "${1:-}" = "-R" ]; then set -- cassandra "$@"; fi
if [ "${1:-}" != "cassandra" ]; then exec "$@"; fi

own_ip() { hostname -i 2>/dev/null | awk '{print $1}'; }

: "${CASSANDRA_LISTEN_ADDRESS:=auto}"
[ "$CASSANDRA_LISTEN_ADDRESS" = auto ] && CASSANDRA_LISTEN_ADDRESS="$(own_ip)"
: "${CASSANDRA_BROADCAST_ADDRESS:=$CASSANDRA_LISTEN_ADDRESS}"
[ "$CASSANDRA_BROADCAST_ADDRESS" = auto ] && CASSANDRA_BROADCAST_ADDRESS="$(own_ip)"
: "${CASSANDRA_RPC_ADDRESS:=0.0.0.0}"
: "${CASSANDRA_BROADCAST_RPC_ADDRESS:=$CASSANDRA_BROADCAST_ADDRESS}"
: "${CASSANDRA_SEEDS:=$CASSANDRA_BROADCAST_ADDRESS}"
: "${CASSANDRA_NUM_TOKENS:=16}"
export CASSANDRA_LISTEN_ADDRESS CASSANDRA_BROADCAST_ADDRESS CASSANDRA_RPC_ADDRESS \
  CASSANDRA_BROADCAST_RPC_ADDRESS CASSANDRA_SEEDS CASSANDRA_NUM_TOKENS

/opt/cassandra/bin/cassandra-configure
shift
exec /opt/cassandra/bin/cassandra "$@"
