# shellcheck shell=sh
# common.sh: the setup tarball.sh, deb.sh and oci.sh share. Each sources it after `set -eu`
# (`. "$(dirname "$0")/common.sh"`) and calls
#
#   dist_setup [STAGE [OUT]]     (defaults: dist/stage, dist)
#
# which sets
#   script   the caller's name, for its messages
#   root     the checkout
#   stage    STAGE as an absolute path; it must hold bin/pushhub and bin/hubctl (binaries.sh)
#   out      OUT as an absolute path, made if missing
#   version  scripts/version.sh's version (the Debian form: `printf %s "$version" | tr - '~'`)
#   epoch    SOURCE_DATE_EPOCH, default the commit's time; exported (dpkg-deb, gzip -n read it)
#   work     an empty folder in OUT, removed when the script exits, also on INT and TERM. Outputs
#            are made there and moved into OUT when whole (one file system: `mv` renames), so a
#            failed run leaves no partial file behind.
# and umask 022: the modes of what the scripts make (files, and directories as tar and dpkg-deb
# record them) do not depend on the caller's umask (under 002 the .deb's directories were 0775;
# under 027 or 077 dpkg-deb refused its DEBIAN/).

# shellcheck disable=SC2034 # the variables are the callers'
dist_setup() {
    script=${0##*/}
    umask 022
    root=$(cd "$(dirname "$0")/../.." && pwd)
    stage=$(cd "${1:-$root/dist/stage}" && pwd)
    mkdir -p "${2:-$root/dist}"
    out=$(cd "${2:-$root/dist}" && pwd)
    version=$("$root/scripts/version.sh" "$root")
    epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2> /dev/null || echo 0)}
    export SOURCE_DATE_EPOCH="$epoch"
    for product in pushhub hubctl; do
        [ -x "$stage/bin/$product" ] ||
            { echo "$script: no $stage/bin/$product (run scripts/dist/binaries.sh)" >&2; exit 1; }
    done
    work=$(mktemp -d "$out/.${script%.sh}.XXXXXX")
    # An INT or TERM handler that returned would let the script go on without $work: exit, which
    # runs the EXIT trap.
    trap 'rm -rf "$work"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}
