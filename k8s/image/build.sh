#!/usr/bin/env bash
# Builds the chessd container image with buildah, on machines that cannot pull
# from a container registry: the Debian 12 base images are made locally with
# debootstrap from the apt mirror this machine already uses, and imported as
#   localhost/debian:bookworm       (debootstrap --variant=minbase, like the
#                                    official image, which is minbase too)
#   localhost/debian:bookworm-slim  (the same, less docs, man pages and locales,
#                                    as the official -slim images do)
# Each is made only when missing (the debootstrapped root file systems are
# cached under $WORK). Then the Dockerfile is built with
#   buildah bud --isolation chroot --build-arg BASE=... --build-arg RUNTIME_BASE=...
#
# Needs root (debootstrap, buildah mount); installs buildah and debootstrap
# with apt-get when missing.
#
# Environment:
#   IMAGE               tag to build (localhost/chessd:latest)
#   BASE_IMAGE          builder base (localhost/debian:bookworm)
#   RUNTIME_BASE_IMAGE  runtime base (localhost/debian:bookworm-slim)
#   WORK                cache of root file systems (build/image)
#   MIRROR              Debian mirror (default: the one in this machine's apt sources)
#   SECURITY_MIRROR     Debian security mirror (same)
#   REBUILD_BASE=1      make the base images again even if they exist
#   BUILDAH_ISOLATION   chroot by default (no user namespaces or runc needed)
#   STORAGE_DRIVER      buildah reads it itself (e.g. vfs where overlay fails)
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=${IMAGE:-localhost/chessd:latest}
BASE_IMAGE=${BASE_IMAGE:-localhost/debian:bookworm}
RUNTIME_BASE_IMAGE=${RUNTIME_BASE_IMAGE:-localhost/debian:bookworm-slim}
WORK=${WORK:-build/image}
SUITE=bookworm
export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}

log() { printf 'image-build: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
elapsed() { local s=$(( SECONDS - $1 )); printf '%dm%02ds' $(( s / 60 )) $(( s % 60 )); }

[ "$(id -u)" = 0 ] || die "run as root (debootstrap and buildah mount need it)"

missing=()
command -v buildah >/dev/null || missing+=(buildah)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# The mirror for SUITE (or SUITE-security) from this machine's apt sources,
# deb822 (*.sources) or one-line (*.list) style.
apt_mirror() {
    local suite=$1 f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v want="$suite" '
            function flush() { if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " want " ") && uris != "") { split(uris, u, " "); print u[1]; found = 1; exit } types = suites = uris = "" }
            /^[ \t]*$/ { flush(); next }
            /^Types:/  { sub(/^Types:[ \t]*/, "");  types = $0 }
            /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
            /^URIs:/   { sub(/^URIs:[ \t]*/, "");   uris = $0 }
            END { if (!found) flush() }' "$f"
    done | head -n1 | grep . && return 0
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | awk -v want="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++; if ($(i+1) == want) { print $i; exit } }' \
        | grep . && return 0
    return 1
}
MIRROR=${MIRROR:-$(apt_mirror "$SUITE" || echo http://deb.debian.org/debian)}
SECURITY_MIRROR=${SECURITY_MIRROR:-$(apt_mirror "$SUITE-security" || echo http://deb.debian.org/debian-security)}
MIRROR=${MIRROR%/}
SECURITY_MIRROR=${SECURITY_MIRROR%/}

image_exists() { buildah inspect --type image "$1" >/dev/null 2>&1; }

# Shapes a debootstrapped tree like the official debian images (debuerreotype):
# deb822 sources with updates and security, docker-clean apt settings, no
# services started by package scripts, no apt lists, logs or host leftovers.
configure_rootfs() {
    local root=$1
    rm -f "$root/etc/apt/sources.list"
    cat > "$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    cat > "$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
    echo 'Acquire::GzipIndexes "true";' > "$root/etc/apt/apt.conf.d/docker-gzip-indexes"
    echo 'Acquire::Languages "none";' > "$root/etc/apt/apt.conf.d/docker-no-languages"
    echo 'Apt::AutoRemove::SuggestsImportant "false";' > "$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
    # A dated snapshot mirror has expired Release files: apt on this machine is
    # told to accept them, so the image's apt must be too (only then).
    if apt-config dump | grep -q '^Acquire::Check-Valid-Until "false"'; then
        cat > "$root/etc/apt/apt.conf.d/99local-mirror" <<'EOF'
// Written by k8s/image/build.sh: the local mirror is a dated snapshot.
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
EOF
    fi
    printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin \
           "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/archives/partial/*
    find "$root/var/log" -type f -delete
    rm -f "$root/etc/hostname" "$root/etc/resolv.conf" "$root"/var/cache/debconf/*-old
    : > "$root/etc/machine-id"
}

# What debuerreotype-slimify leaves out of the -slim images.
slimify_rootfs() {
    local root=$1
    mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
    cat > "$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
# As in the official debian:*-slim images: no docs, man pages or locales.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/man/*
EOF
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$root"/usr/share/groff/* "$root"/usr/share/info/* "$root"/usr/share/linda/* \
           "$root"/usr/share/lintian/overrides/* "$root"/usr/share/man/*
    find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
}

# Copies a root file system into an empty (scratch) container and commits it.
import_rootfs() {
    local root=$1 name=$2 ctr mnt
    ctr=$(buildah from scratch)
    # shellcheck disable=SC2064
    trap "buildah umount '$ctr' >/dev/null 2>&1 || true; buildah rm '$ctr' >/dev/null 2>&1 || true" EXIT
    mnt=$(buildah mount "$ctr")
    tar -C "$root" --numeric-owner --xattrs --xattrs-include='*' \
        --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' --exclude='./run/*' --exclude='./tmp/*' \
        -cf - . | tar -C "$mnt" --numeric-owner --xattrs --xattrs-include='*' -xpf -
    buildah umount "$ctr" >/dev/null
    buildah config --os linux --arch "$(dpkg --print-architecture)" \
        --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --cmd '["bash"]' \
        --label org.opencontainers.image.description="Debian $SUITE made by k8s/image/build.sh with debootstrap from $MIRROR" \
        "$ctr"
    buildah commit --rm --quiet "$ctr" "$name" >/dev/null
    trap - EXIT
    log "committed $name"
}

make_base_images() {
    local minbase=$WORK/rootfs-$SUITE-minbase slim=$WORK/rootfs-$SUITE-slim t
    mkdir -p "$WORK"
    if [ ! -f "$minbase/.complete" ]; then
        t=$SECONDS
        log "debootstrap --variant=minbase $SUITE from $MIRROR into $minbase (takes a few minutes)"
        rm -rf "$minbase" "$minbase.tmp"
        debootstrap --variant=minbase --arch="$(dpkg --print-architecture)" "$SUITE" "$minbase.tmp" "$MIRROR" \
            > "$WORK/debootstrap.log" 2>&1 || { tail -n 30 "$WORK/debootstrap.log" >&2; die "debootstrap failed (log: $WORK/debootstrap.log)"; }
        configure_rootfs "$minbase.tmp"
        mv "$minbase.tmp" "$minbase"
        touch "$minbase/.complete"
        log "debootstrap took $(elapsed "$t")"
    else
        log "using cached $minbase"
    fi
    if [ ! -f "$slim/.complete" ]; then
        rm -rf "$slim" "$slim.tmp"
        cp -a "$minbase" "$slim.tmp"
        rm -f "$slim.tmp/.complete"
        slimify_rootfs "$slim.tmp"
        mv "$slim.tmp" "$slim"
        touch "$slim/.complete"
    fi
    if [ "${REBUILD_BASE:-0}" = 1 ] || ! image_exists "$BASE_IMAGE"; then
        import_rootfs "$minbase" "$BASE_IMAGE"
    fi
    if [ "${REBUILD_BASE:-0}" = 1 ] || ! image_exists "$RUNTIME_BASE_IMAGE"; then
        import_rootfs "$slim" "$RUNTIME_BASE_IMAGE"
    fi
}

start=$SECONDS
case $BASE_IMAGE$RUNTIME_BASE_IMAGE in
    *localhost/*) make_base_images ;;   # our own bases; others are pulled by buildah
esac
log "bases ready after $(elapsed "$start")"

t=$SECONDS
pull=never
case $BASE_IMAGE$RUNTIME_BASE_IMAGE in *localhost/*) ;; *) pull=false ;; esac
log "buildah bud --isolation $BUILDAH_ISOLATION -t $IMAGE"
buildah bud --isolation "$BUILDAH_ISOLATION" --layers --pull="$pull" \
    --build-arg BASE="$BASE_IMAGE" --build-arg RUNTIME_BASE="$RUNTIME_BASE_IMAGE" \
    -f Dockerfile -t "$IMAGE" .
log "buildah bud took $(elapsed "$t"); total $(elapsed "$start")"
buildah images --format '{{.Name}}:{{.Tag}} {{.ID}} {{.Size}}' "$IMAGE"
