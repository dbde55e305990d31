#!/usr/bin/env bash
# Installs the Autobahn|Testsuite (Python 2.7 code) into .autobahn/ unless it is there.
# Facts behind each step: ../shared/autobahn/NOTES.md. /etc/apt is never modified: Python 2.7
# comes from Debian 11 through a throw-away apt configuration under .autobahn/apt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/.autobahn
if [ -x "$root/py27/bin/wstest" ]; then exit 0; fi
mkdir -p "$root"

if [ ! -x /usr/bin/python2.7 ]; then
  apt_dir=$root/apt
  mkdir -p "$apt_dir/sources" "$apt_dir/preferences" "$apt_dir/lists/partial"
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "deb $mirror bullseye main" > "$apt_dir/sources/bullseye.list"
  printf 'Package: *\nPin: release n=bullseye\nPin-Priority: 100\n' > "$apt_dir/preferences/bullseye.pref"
  opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir/sources"
        -o Dir::Etc::PreferencesParts="$apt_dir/preferences" -o Dir::State::Lists="$apt_dir/lists")
  apt-get "${opts[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" install -y -qq -t bullseye python2.7 python2.7-dev gcc >/dev/null
fi

requirements=../shared/autobahn/requirements-py27.txt
[ -f "$requirements" ] || requirements=Tests/Conformance/requirements-py27.txt
python3 -m venv "$root/py3"
"$root/py3/bin/pip" install -q --disable-pip-version-check virtualenv==20.21.1
"$root/py3/bin/virtualenv" -q -p /usr/bin/python2.7 "$root/py27"
"$root/py27/bin/pip" install -q --disable-pip-version-check -r "$requirements"
"$root/py27/bin/wstest" -a
