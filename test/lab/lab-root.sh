#!/usr/bin/env bash
# Prints the path of a Debian root holding the lab's real stack, building it
# once (shared/LAB.md):
#   lab-root.sh trixie     torch 2.6 (torchrun 2.6, Gloo) and libnccl2 2.22
#   lab-root.sh bookworm   torch 1.13 (torchrun 1.13, Gloo)
#   lab-root.sh sid        torch 2.14 (torchrun 2.14, Gloo) and libnccl2 2.29 #sid
# When this host is that Debian release and has the packages, the host itself
# serves and it prints '/'. Otherwise the root is made with debootstrap under
# $NCCL_RUN_LAB_CACHE (default /var/cache/nccl-run-lab), outside any checkout,
# so later runs reuse it. A root is trusted only when it carries the marker
# written after its last step, and it is built in a temporary folder renamed
# into place at the end: an interrupted build leaves nothing a later run
# trusts. The recipe is this file: editing it builds a new root. Needs root.
set -euo pipefail

suite=${1:?usage: lab-root.sh trixie|bookworm}
case $suite in
  trixie) packages=(python3-torch libnccl2) ;;
  bookworm) packages=(python3-torch) ;;
  # sid's Release file is older than these machines' clock (signatures are still checked). #sid
  sid) packages=(-o Acquire::Check-Valid-Until=false python3-torch libnccl2) ;; #sid
  *) echo "lab-root.sh: unknown suite '$suite' (trixie or bookworm)" >&2; exit 64 ;;
esac
mirror=http://deb.debian.org/debian

has_stack() { # ROOT: the launcher and, for trixie, NCCL are there
  [ -x "$1/usr/bin/torchrun" ] || return 1
  [ "$suite" != trixie ] || compgen -G "$1/usr/lib/*/libnccl.so.2" >/dev/null
  [ "$suite" != sid ] || compgen -G "$1/usr/lib/*/libnccl.so.2" >/dev/null #sid
}

. /etc/os-release
if [ "${VERSION_CODENAME:-}" = "$suite" ] && has_stack /; then
  echo /
  exit 0
fi

cache=${NCCL_RUN_LAB_CACHE:-/var/cache/nccl-run-lab}
recipe=$(sha256sum "$0" | cut -c1-12)
# The lines ending in '#sid' added the sid root; trixie's and bookworm's recipe #sid
# leaves them out, so that their cached roots (and their hash) stayed as they were. #sid
[ "$suite" = sid ] || recipe=$(grep -v ' #sid$' "$0" | sha256sum | cut -c1-12) #sid
root=$cache/$suite-$recipe
marker=$root/.nccl-run-lab-ready

mkdir -p "$cache"
exec 9>"$cache/$suite.lock"
flock 9 # one build at a time; a waiting run then finds the finished root

if [ -f "$marker" ] && has_stack "$root"; then
  echo "$root"
  exit 0
fi

command -v debootstrap >/dev/null || {
  echo "lab-root.sh: debootstrap is missing (apt-get install -y debootstrap)" >&2
  exit 69
}
started=$SECONDS
echo "lab-root.sh: building the $suite lab root (${packages[*]}) in $root" >&2
work=$(mktemp -d "$cache/.$suite-build.XXXXXX")
cleanup() {
  umount -l "$work/proc" 2>/dev/null || true
  rm -rf --one-file-system "$work" "$work.log"
}
trap cleanup EXIT
debootstrap --variant=minbase --components=main,contrib "$suite" "$work" "$mirror" >"$work.log" 2>&1 ||
  { tail -20 "$work.log" >&2; exit 1; }
mount -t proc proc "$work/proc"
DEBIAN_FRONTEND=noninteractive chroot "$work" apt-get install -y -qq --no-install-recommends \
  "${packages[@]}" >>"$work.log" 2>&1 || { tail -20 "$work.log" >&2; exit 1; }
chroot "$work" apt-get clean
umount "$work/proc"
rm -f "$work.log"
has_stack "$work"
date -u +%FT%TZ >"$work/.nccl-run-lab-ready"
rm -rf --one-file-system "$root" # a broken earlier root of the same recipe
mv "$work" "$root"
trap - EXIT
# Older recipes' roots are dead weight (1.5 GB each).
for old in "$cache/$suite"-*; do
  [ "$old" = "$root" ] || rm -rf --one-file-system "$old"
done
echo "lab-root.sh: $suite lab root ready in $((SECONDS - started)) s, $(du -sh "$root" | cut -f1)" >&2
echo "$root"
