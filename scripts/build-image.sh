#!/bin/bash
# Builds a local Docker image equivalent to the official cassandra:5.0 image, for machines
# where no container registry is reachable:
#   1. a Debian bookworm rootfs (debootstrap --variant=minbase) with openjdk-17-jre-headless,
#      python3 and procps, imported with `docker import` as $ROOTFS_IMAGE (built once);
#   2. a tiny Dockerfile on top: the Cassandra home from fetch-cassandra.sh, cqlsh from
#      PyPI, and an entrypoint honouring the official image's CASSANDRA_* variables.
# Reuses the image when it exists and its inputs have not changed; prints its name.
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

ROOTFS_IMAGE="${CQLSAFE_ROOTFS_IMAGE:-cqlsafe/debian-jre17:bookworm}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CQLSH_VERSION="${CQLSH_VERSION:-6.2.2}"

"$CQLSAFE_ROOT/scripts/dockerd.sh"

# The image is rebuilt when anything that goes into it changes.
# Every input: this script, the fetch script and shared settings, the launcher, the config
# (integration/harness/native, embedded in the harness too),
# the entrypoint and cqlsh wrapper, and the versions.
inputs_hash="$( (echo "$CASSANDRA_VERSION $CQLSH_VERSION $ROOTFS_IMAGE"; \
  find "$CQLSAFE_ROOT/scripts/build-image.sh" "$CQLSAFE_ROOT/scripts/fetch-cassandra.sh" "$CQLSAFE_ROOT/scripts/lib.sh" \
    "$CQLSAFE_ROOT/scripts/cassandra" "$CQLSAFE_ROOT/integration/harness/native" "$CQLSAFE_ROOT/scripts/image" \
    -type f -print0 | sort -z | xargs -0 cat) \
  | sha256sum | cut -c1-16)"
if [ "$(docker image inspect -f '{{index .Config.Labels "io.cqlsafe.inputs"}}' "$CQLSAFE_LOCAL_IMAGE" 2>/dev/null)" = "$inputs_hash" ]; then
  log "image $CQLSAFE_LOCAL_IMAGE is up to date"
  printf '%s\n' "$CQLSAFE_LOCAL_IMAGE"; exit 0
fi

t0=$(date +%s)
work="$CQLSAFE_CACHE_DIR/image-build"
as_root rm -rf "$work"; mkdir -p "$work"

if ! docker image inspect "$ROOTFS_IMAGE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || apt_install debootstrap
  rootfs="$work/rootfs"
  log "debootstrap bookworm (minbase) into $rootfs"
  as_root debootstrap --variant=minbase bookworm "$rootfs" "$DEBIAN_MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  # Java's package scripts need /proc; mount it only for the install.
  as_root mount -t proc proc "$rootfs/proc"
  trap 'as_root umount "$rootfs/proc" 2>/dev/null || true' EXIT
  log "installing openjdk-17-jre-headless, python3, procps in the rootfs"
  as_root chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive bash -c '
    apt-get update -qq &&
    apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless python3 procps >/dev/null &&
    apt-get clean && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man /usr/share/locale' \
    || die "package install in the rootfs failed"
  as_root umount "$rootfs/proc"; trap - EXIT
  log "importing the rootfs as $ROOTFS_IMAGE"
  as_root tar -C "$rootfs" -c . | docker import - "$ROOTFS_IMAGE" >/dev/null
  as_root rm -rf "$rootfs"
fi

home="$("$CQLSAFE_ROOT/scripts/fetch-cassandra.sh")"
ctx="$work/context"
mkdir -p "$ctx"
cp -r "$home" "$ctx/cassandra"
# Native helpers for other platforms are dead weight in a Linux image.
rm -f "$ctx"/cassandra/lib/*-osx-*.jar "$ctx"/cassandra/lib/*-windows-*.jar "$ctx"/cassandra/lib/*-riscv64.jar
log "installing cqlsh $CQLSH_VERSION from PyPI into the build context"
python3 -m pip install -q --no-compile --disable-pip-version-check --root-user-action=ignore --target "$ctx/cqlsh-lib" "cqlsh==$CQLSH_VERSION" \
  || die "pip could not install cqlsh"
rm -rf "$ctx/cqlsh-lib/bin"
cp "$CQLSAFE_ROOT/scripts/image/docker-entrypoint.sh" "$CQLSAFE_ROOT/scripts/image/cqlsh" "$ctx/"
cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM $ROOTFS_IMAGE
ENV CASSANDRA_HOME=/opt/cassandra CASSANDRA_CONF=/etc/cassandra \\
    CASSANDRA_LOG_DIR=/var/log/cassandra CASSANDRA_STORAGE_DIR=/var/lib/cassandra \\
    JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 \\
    PATH=/opt/cassandra/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY cassandra /opt/cassandra
COPY cqlsh-lib /opt/cqlsh
COPY docker-entrypoint.sh cqlsh /usr/local/bin/
RUN mv /opt/cassandra/conf /etc/cassandra && ln -s /etc/cassandra /opt/cassandra/conf \\
 && ln -s /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/java-17 2>/dev/null; \\
    mkdir -p /var/lib/cassandra /var/log/cassandra && chmod 755 /usr/local/bin/*
LABEL io.cqlsafe.inputs=$inputs_hash org.opencontainers.image.title="cqlsafe local Apache Cassandra $CASSANDRA_VERSION"
VOLUME /var/lib/cassandra
EXPOSE 7000 7001 7199 9042
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["cassandra", "-f"]
DOCKERFILE
arch="$(dpkg --print-architecture 2>/dev/null || echo amd64)"
sed -i "s/java-17-openjdk-amd64/java-17-openjdk-$arch/" "$ctx/Dockerfile"
log "building $CQLSAFE_LOCAL_IMAGE"
DOCKER_BUILDKIT=0 docker build -q -t "$CQLSAFE_LOCAL_IMAGE" "$ctx" >/dev/null || die "docker build failed"
as_root rm -rf "$work"
log "image $CQLSAFE_LOCAL_IMAGE built in $(( $(date +%s) - t0 ))s"
printf '%s\n' "$CQLSAFE_LOCAL_IMAGE"
