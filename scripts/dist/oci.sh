#!/bin/sh
# Builds PushHub's OCI image without a container engine or a registry, the way distroless does:
# Debian's .debs of the few libraries the static binaries link (those `ldd` lists: libc6,
# libgcc-s1, libstdc++6, libssl3, zlib1g) plus ca-certificates, unpacked with `dpkg-deb -x` into a root file system with
# no shell and no package manager; a non-root user 10001; the binaries in /usr/local/bin. Then an
# OCI image layout made by hand (two gzip'd layer tars, a config, a manifest, index.json), and the
# layout as one tar: dist/pushhub-V-oci.tar (V from scripts/version.sh).
#
# Reproducible: every mtime is SOURCE_DATE_EPOCH (default: the commit's time), tar entries are
# sorted with numeric owners, gzip stores no name or time, the JSON is jq's sorted compact form.
# The same commit, binaries and .deb versions give the same image digest (Tests/Dist/test_oci.py).
#
# Layers: 1. the Debian base (changes when Debian updates a package), 2. the binaries and
# /var/lib/pushhub (changes every commit): a new release pulls only the second.
#
# Usage: scripts/dist/oci.sh [STAGE] [DIST]
#   STAGE: holds bin/pushhub and bin/hubctl (default dist/stage, made by scripts/dist/binaries.sh)
#   DIST:  where the archive and the layout (DIST/oci/) go (default dist)
# Environment: SOURCE_DATE_EPOCH, DIST_CACHE (the .debs' cache, scripts/dist/debs.sh; default
# .build-dist), OCI_SOURCE (the source label; default the git remote "origin").
# Needs: apt-get, dpkg, dpkg-deb, GNU tar, gzip, sha256sum, nm, jq (mk/oci.mk installs jq); not root.
set -eu
# umask 022 (common.sh): the modes of the files made here (passwd, the bundle, directories) do not
# depend on the caller's.
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
dist_setup "$@"
dist=$out
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
source_url=${OCI_SOURCE:-$(git -C "$root" config --get remote.origin.url 2>/dev/null \
    || echo https://github.com/example/pushhub)}
# The health check is deploy/Containerfile's HEALTHCHECK (the Docker-engine path), so that both
# images check the same way, in Docker's config form (durations in nanoseconds):
#   HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
#     CMD ["/usr/local/bin/hubctl", "probe", "live"]
healthcheck=$(sed -n '/^HEALTHCHECK /{N;s/\\\n//;p;}' "$root/deploy/Containerfile")
health=$(jq -n -c --arg h "$healthcheck" '
  def seconds(k): $h | capture("--" + k + "=(?<n>[0-9]+)s(?: |$)").n | tonumber * 1000000000;
  {Test: (["CMD"] + ($h | capture("CMD (?<c>\\[.*\\])$").c | fromjson)),
   Interval: seconds("interval"), Timeout: seconds("timeout"), StartPeriod: seconds("start-period"),
   Retries: ($h | capture("--retries=(?<n>[0-9]+)").n | tonumber)}') \
    || { echo "oci.sh: no HEALTHCHECK ... CMD [...] in deploy/Containerfile" >&2; exit 1; }
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo "$(uname -m)-linux-gnu")

# The packages: those holding each library `ldd` lists for the binaries (the host's dpkg database
# says which; ldd lists the whole closure), plus ca-certificates: libc6, libgcc-s1, libstdc++6,
# libssl3 and zlib1g (binaries.sh fails on a library outside them, libcurl4's closure for one).
# The libraries' file names, from one ldd (to a file: in a pipe its failure would go unseen).
ldd "$stage/bin/pushhub" "$stage/bin/hubctl" > "$work/ldd"
names=$(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' "$work/ldd" |
    sed 's|.*/||' | LC_ALL=C sort -u)
if [ -z "$names" ] || grep -q 'not found' "$work/ldd"; then
    echo "oci.sh: ldd finds no library, or not all of them:" >&2; cat "$work/ldd" >&2; exit 1
fi
# One dpkg -S for all of them: "package:arch: path" lines, kept where the path is a loader
# directory's (not a debug or i386 copy).
# shellcheck disable=SC2086
dpkg -S $names 2>/dev/null | while IFS= read -r line; do
    path=${line##*: }
    name=${path##*/}
    case "$path" in
        "/lib/$multiarch/$name" | "/usr/lib/$multiarch/$name" | "/lib64/$name" | "/usr/lib64/$name")
            printf '%s %s\n' "$(printf '%s' "${line%%: *}" | cut -d: -f1)" "$name" ;;
    esac
done > "$work/owners"
for name in $names; do
    grep -q " $name\$" "$work/owners" || { echo "oci.sh: no Debian package has $name" >&2; exit 1; }
done
packages="$(cut -d' ' -f1 "$work/owners" | sort -u | tr '\n' ' ')ca-certificates"

# --- the .debs: the candidate versions of this machine's apt sources, cached (debs.sh) -----------
# shellcheck disable=SC2086
sh "$root/scripts/dist/debs.sh" $packages > "$work/debs"
base_files=$(sh "$root/scripts/dist/debs.sh" base-files)

# --- layer 1: the Debian base --------------------------------------------------------------------
base=$work/base
mkdir -p "$base/var/lib/dpkg/status.d"
while IFS= read -r file; do
    package=${file##*/}
    package=${package%%_*}
    dpkg-deb -x "$file" "$base"
    # What scanners (trivy, grype, syft) read to know the packages, as distroless writes it.
    dpkg-deb -f "$file" > "$base/var/lib/dpkg/status.d/$package"
done < "$work/debs"
# No documentation, manual or lintian data; each package's copyright stays (its licence).
find "$base/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -exec rm -f {} +
find "$base/usr/share/doc" -depth -mindepth 1 -type d -empty -exec rmdir {} +
rm -rf "$base/usr/share/man" "$base/usr/share/info" "$base/usr/share/lintian" \
       "$base/usr/share/gcc" "$base/usr/share/gdb" "$base/usr/sbin/update-ca-certificates"
rmdir "$base/usr/sbin" 2>/dev/null || true
# glibc's gconv modules (8 MB) serve iconv(3) only: dropped when neither binary calls it.
if ! nm -D "$stage/bin/pushhub" "$stage/bin/hubctl" | grep -q ' U iconv'; then
    rm -rf "$base/usr/lib/$multiarch/gconv"
fi
# The bundle update-ca-certificates makes in ca-certificates' postinst (no shell runs here):
# every Mozilla certificate, in name order, where OpenSSL's default paths find it.
mkdir -p "$base/etc/ssl/certs" "$base/usr/lib/ssl"
find "$base/usr/share/ca-certificates" -name '*.crt' | LC_ALL=C sort | while read -r crt; do
    cat "$crt"
done > "$base/etc/ssl/certs/ca-certificates.crt"
[ -s "$base/etc/ssl/certs/ca-certificates.crt" ] || { echo "oci.sh: no certificates" >&2; exit 1; }
ln -s ../../../etc/ssl/certs "$base/usr/lib/ssl/certs"
ln -s ../../../etc/ssl/certs/ca-certificates.crt "$base/usr/lib/ssl/cert.pem"
# The OS, for scanners and `cat /etc/os-release` users: base-files' file, nothing else of it.
dpkg-deb --fsys-tarfile "$base_files" > "$work/base-files.tar"
tar -x -O -f "$work/base-files.tar" ./usr/lib/os-release > "$base/etc/os-release"
cat > "$base/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
pushhub:x:10001:10001:PushHub:/var/lib/pushhub:/sbin/nologin
EOF
cat > "$base/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
pushhub:x:10001:
EOF
printf 'hosts: files dns\n' > "$base/etc/nsswitch.conf"
mkdir -p "$base/tmp" "$base/root"
chmod 1777 "$base/tmp"
chmod 0700 "$base/root"

# Every library the binaries need (ldd's list above) must be in the base (by file name, in a
# loader directory).
for name in $names; do
    found=false
    for dir in "lib/$multiarch" "usr/lib/$multiarch" lib64 lib; do
        if [ -e "$base/$dir/$name" ]; then found=true; fi
    done
    $found || { echo "oci.sh: the binaries need $name, which no package in the image has" >&2; exit 1; }
done

# --- layer 2: the binaries and the data directory -----------------------------------------------
app=$work/app
mkdir -p "$app/usr/local/bin" "$app/var/lib/pushhub"
install -m 0755 "$stage/bin/pushhub" "$stage/bin/hubctl" "$app/usr/local/bin/"
chmod 0700 "$app/var/lib/pushhub"

# tree_tar DIR OUT [PATH]: DIR as a reproducible tar: sorted names without "./", one mtime, no
# atime/ctime in pax headers, every entry owned by 0:0 except PATH (the data directory, the last
# name in sort order), owned by 10001:10001. The owners are given, not read, so no root is needed.
tree_tar() {
    (cd "$1" && find . -mindepth 1 | sed 's|^\./||' | LC_ALL=C sort > "$work/list")
    if [ -n "${3:-}" ]; then
        [ "$(tail -n 1 "$work/list")" = "$3" ] || { echo "oci.sh: $3 does not sort last" >&2; exit 1; }
        sed '$d' "$work/list" > "$work/list.root"
    else
        cp "$work/list" "$work/list.root"
    fi
    # Options without spaces, split on purpose (POSIX sh has no arrays).
    options="--no-recursion --format=posix --numeric-owner --mtime=@$epoch"
    options="$options --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime"
    # shellcheck disable=SC2086
    tar --create --file="$2" --directory="$1" --owner=0 --group=0 $options --files-from="$work/list.root"
    if [ -n "${3:-}" ]; then
        # shellcheck disable=SC2086
        tar --append --file="$2" --directory="$1" --owner=10001 --group=10001 $options "$3"
    fi
}

layout=$work/layout
mkdir -p "$layout/blobs/sha256"
# blob FILE: moves FILE into the layout under its digest; prints the digest.
blob() {
    digest=$(sha256sum "$1" | cut -d' ' -f1)
    mv "$1" "$layout/blobs/sha256/$digest"
    echo "$digest"
}
size() { stat -c %s "$layout/blobs/sha256/$1"; }

diff_ids=""
layers=""
for tree in base app; do
    data=""
    if [ "$tree" = app ]; then data=var/lib/pushhub; fi
    tree_tar "$work/$tree" "$work/$tree.tar" "$data"
    diff_id=$(sha256sum "$work/$tree.tar" | cut -d' ' -f1)
    gzip -n -6 < "$work/$tree.tar" > "$work/$tree.tar.gz"
    rm -f "$work/$tree.tar"
    digest=$(blob "$work/$tree.tar.gz")
    diff_ids="$diff_ids sha256:$diff_id"
    layers="$layers $digest"
done

# The image config (OCI image spec, config.md). "Healthcheck" is Docker's field, not OCI's: OCI
# runtimes ignore an unknown field, and Docker (after `skopeo copy ... docker-archive:`) and
# Podman, which read the config as Docker's, find it there.
jq -n -c -S \
    --arg created "$created" --arg arch "$arch" --arg version "$version" \
    --arg revision "$revision" --arg source "$source_url" --argjson health "$health" \
    --arg diff_ids "$diff_ids" --arg packages "$packages" '
{
  created: $created, architecture: $arch, os: "linux",
  config: {
    User: "10001:10001",
    ExposedPorts: {"8080/tcp": {}, "8081/tcp": {}},
    Env: ["PATH=/usr/local/bin:/usr/bin:/bin",
          "PUSHHUB_LISTEN=0.0.0.0:8080", "PUSHHUB_ADMIN=0.0.0.0:8081",
          "PUSHHUB_DATA=/var/lib/pushhub", "PUSHHUB_DRAIN_TIMEOUT=8s",
          "HUBCTL_URL=http://127.0.0.1:8081"],
    Entrypoint: ["/usr/local/bin/pushhub"],
    WorkingDir: "/var/lib/pushhub",
    Volumes: {"/var/lib/pushhub": {}},
    StopSignal: "SIGTERM",
    Healthcheck: $health,
    Labels: {
      "org.opencontainers.image.title": "pushhub",
      "org.opencontainers.image.description": "PushHub, a WebSocket push hub",
      "org.opencontainers.image.version": $version,
      "org.opencontainers.image.revision": $revision,
      "org.opencontainers.image.source": $source,
      "org.opencontainers.image.created": $created,
      "org.opencontainers.image.base.name": "debian bookworm .debs (distroless-style)"
    }
  },
  rootfs: {type: "layers", diff_ids: ($diff_ids | split(" ") | map(select(. != "")))},
  history: [
    {created: $created, created_by: ("scripts/dist/oci.sh: dpkg-deb -x " + $packages)},
    {created: $created, created_by: "scripts/dist/oci.sh: /usr/local/bin/pushhub, hubctl; /var/lib/pushhub"}
  ]
}' > "$work/config.json"
config=$(blob "$work/config.json")

layer_descriptors=$(for digest in $layers; do
    printf '{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}\n' \
        "$digest" "$(size "$digest")"
done | jq -s -c .)
jq -n -c -S --arg config "sha256:$config" --argjson config_size "$(size "$config")" \
    --argjson layers "$layer_descriptors" --arg version "$version" --arg revision "$revision" \
    --arg created "$created" '
{
  schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $config, size: $config_size},
  layers: $layers,
  annotations: {"org.opencontainers.image.version": $version,
                "org.opencontainers.image.revision": $revision,
                "org.opencontainers.image.created": $created}
}' > "$work/manifest.json"
manifest=$(blob "$work/manifest.json")

jq -n -c -S --arg manifest "sha256:$manifest" --argjson size "$(size "$manifest")" \
    --arg version "$version" '
{
  schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
  manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $manifest,
               size: $size, annotations: {"org.opencontainers.image.ref.name": ("pushhub:" + $version)}}]
}' > "$layout/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' > "$layout/oci-layout"
find "$layout" -type d -exec chmod 0755 {} +
find "$layout" -type f -exec chmod 0644 {} +

archive=$dist/pushhub-$version-oci.tar
tree_tar "$layout" "$work/oci.tar"
# One image in DIST: an older version's archive would end up in dist/SHA256SUMS beside this one.
for old in "$dist"/pushhub-*-oci.tar; do
    if [ -e "$old" ] && [ "$old" != "$archive" ]; then rm -f "$old"; fi
done
mv "$work/oci.tar" "$archive"
rm -rf "$dist/oci"
mv "$layout" "$dist/oci"
echo "$archive sha256:$manifest"
