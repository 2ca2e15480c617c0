#!/usr/bin/env bash
# Prints a folder holding what the Docker tier takes from Debian 13 (trixie),
# fetched once and cached outside the checkout (shared/LAB.md):
#   cli-plugins/docker-compose  compose v2 (Debian 12 packages only the
#                               Python docker-compose 1.29); a Go binary that
#                               needs glibc 2.34, so it runs on Debian 12 as
#                               a plugin of Debian 12's docker CLI (20.10)
#   debs/tini_*.deb, Packages   a flat apt repository: the tier's package
#                               mirror serves it to the image build's
#                               `apt-get install tini`
# The packages come with the host's apt, in a throw-away state folder, from
# deb.debian.org, checked with the lab root's trixie keyring: nothing is
# installed on the host or in the lab root. Usage: docker-debs.sh TRIXIE_ROOT
set -euo pipefail

lab_root=${1:?usage: docker-debs.sh TRIXIE_ROOT}
cache=${NCCL_RUN_LAB_CACHE:-/var/cache/nccl-run-lab}
recipe=$(sha256sum "$0" | cut -c1-12)
out=$cache/docker-debs-$recipe
marker=$out/.nccl-run-lab-ready

mkdir -p "$cache"
exec 9>"$cache/docker-debs.lock"
flock 9
if [ -f "$marker" ]; then
  echo "$out"
  exit 0
fi

work=$(mktemp -d "$cache/.docker-debs.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/lists/partial" "$work/apt/archives/partial" "$work/debs" "$work/cli-plugins"
touch "$work/apt/status"
echo "deb [signed-by=$lab_root/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  >"$work/apt/sources.list"
apt_options=(
  -o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::State::status=$work/apt/status"
  -o "Dir::Cache=$work/apt" -o Dir::Etc::Preferences=/dev/null
  -o Dir::Etc::PreferencesParts=/nonexistent -o APT::Architecture=amd64
  -o Debug::NoLocking=1 -o APT::Sandbox::User=root
)
apt-get "${apt_options[@]}" -qq update 2>/dev/null
(cd "$work/debs" && apt-get "${apt_options[@]}" -qq download docker-compose tini 2>/dev/null)
dpkg-deb --fsys-tarfile "$work"/debs/docker-compose_*.deb |
  tar -x -O ./usr/libexec/docker/cli-plugins/docker-compose >"$work/cli-plugins/docker-compose"
chmod 755 "$work/cli-plugins/docker-compose"
rm "$work"/debs/docker-compose_*.deb
for deb in "$work"/debs/*.deb; do
  dpkg-deb -f "$deb"
  echo "Filename: ./${deb##*/}"
  echo "Size: $(stat -c %s "$deb")"
  echo "SHA256: $(sha256sum "$deb" | cut -d' ' -f1)"
  echo
done >"$work/debs/Packages"
rm -rf "$work/apt"
"$work/cli-plugins/docker-compose" version >/dev/null
chmod 755 "$work"
date -u +%FT%TZ >"$work/.nccl-run-lab-ready"
rm -rf "$out"
mv "$work" "$out"
trap - EXIT
for old in "$cache"/docker-debs-*; do
  [ "$old" = "$out" ] || rm -rf "$old"
done
echo "$out"
