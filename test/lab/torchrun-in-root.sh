#!/bin/sh
# torchrun-in-root.sh ROOT [TORCHRUN_ARGS...]
# torchrun-in-root.sh ROOT --exec PROGRAM [ARGS...]
#
# The lab's launcher for a torchrun that lives in a Debian root
# (test/lab/debian-root.ts labRoot): a command, so that nccl-run can be given
# it as `--torchrun "torchrun-in-root.sh ROOT"` (nccl-run splits that value
# into words without a shell, so the mount steps cannot be inline). Run on a
# lab node: the network namespace, its /etc/hosts and the hostname's UTS
# namespace are the caller's (two-node.ts run). It mounts into the root what
# debian-root.ts inRoot does: /proc, /sys (this network namespace's), /dev,
# this node's /etc/hosts, and the checkout at its own path (fixture scripts
# and the libuv workaround keep their paths).
#
# Every step execs (unshare, then sh, then chroot, then torchrun), so the pid
# the caller holds becomes torchrun's and every signal reaches torchrun
# itself, as it would on a real node. ROOT `/` (a Debian 13 host) execs the
# host's torchrun directly. With --exec, PROGRAM runs in the root instead of
# torchrun: nccl-run's single executable, in a root that has no Node.js.
set -eu
root=${1:?usage: torchrun-in-root.sh ROOT [TORCHRUN_ARGS...]}
shift
program=/usr/bin/torchrun
if [ "${1-}" = --exec ]; then
  program=${2:?usage: torchrun-in-root.sh ROOT --exec PROGRAM [ARGS...]}
  shift 2
fi
[ "$root" = / ] && exec "$program" "$@"
checkout=$(cd -- "$(dirname -- "$0")/../.." && pwd)
exec unshare --mount --propagation private sh -c '
  set -eu
  r=$1 c=$2 p=$3
  shift 3
  mount --rbind /proc "$r/proc"
  mount --rbind /sys "$r/sys"
  mount --rbind /dev "$r/dev"
  mount --bind /etc/hosts "$r/etc/hosts"
  mkdir -p "$r$c"
  mount --bind "$c" "$r$c"
  exec chroot "$r" "$p" "$@"
' sh "$root" "$checkout" "$program" "$@"
