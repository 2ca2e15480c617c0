#!/usr/bin/env bash
# What the GPU check (gpu-check.sh) carries to the device machine, which has
# no Node.js and no network: run here, on a machine with npm, before the
# device tool's run, whose `carry` then names the folder (.gitignore keeps it
# out of git; the tool copies an ignored path only when carry names it).
#
#   bash test/device/prepare.sh [--skip-build] [--skip-node] [DIR]
#
# DIR (default .gpu-check) gets:
#   node.xz        the official x86-64 Linux Node the single executable
#                  embeds (scripts/official-node.js fetches and caches it),
#                  xz-compressed: 119 MiB becomes about 28 MiB, within the
#                  tool's 64 MiB; gpu-check.sh unpacks it with xz, or with
#                  Python's lzma where xz is missing
#   nccl-run.mjs   nccl-run's one-file build (npm run build)
#   report.mjs     the report (report-main.ts, bundled with esbuild)
#   manifest       the commit they were built from, the Node version, sizes
# --skip-build takes dist/nccl-run.mjs as it is; --skip-node leaves Node out
# (a rehearsal here, with the node on PATH). Compressing Node takes about
# 100 s of one core, so a node.xz whose source is unchanged is kept.
set -euo pipefail
repo=$(cd -- "$(dirname -- "$0")/../.." && pwd)
cd "$repo"
build=yes node=yes
while [ $# -gt 0 ]; do
  case $1 in
  --skip-build) build= ;;
  --skip-node) node= ;;
  -*)
    echo "prepare.sh: unknown option $1 (--skip-build, --skip-node)" >&2
    exit 64
    ;;
  *) break ;;
  esac
  shift
done
dir=${1:-.gpu-check}
mkdir -p "$dir"

[ -z "$build" ] || npm run --silent build >/dev/null
cp dist/nccl-run.mjs "$dir/nccl-run.mjs"
node_modules/.bin/esbuild test/device/report-main.ts --bundle --platform=node --format=esm \
  --target=node20 --log-level=warning --outfile="$dir/report.mjs"

node_line=
if [ -n "$node" ]; then
  binary=$(node scripts/official-node.js x64)
  sum=$(sha256sum "$binary" | cut -d' ' -f1)
  if [ ! -f "$dir/node.xz" ] || ! grep -qx "node_sha256=$sum" "$dir/manifest" 2>/dev/null; then
    xz -T0 -6 -c "$binary" >"$dir/node.xz.tmp"
    mv "$dir/node.xz.tmp" "$dir/node.xz"
  fi
  node_line="node=$("$binary" --version) node_sha256=$sum"
fi

dirty=$(git status --porcelain --untracked-files=no | wc -l)
{
  echo "commit=$(git rev-parse HEAD)$([ "$dirty" -eq 0 ] || echo " with $dirty uncommitted changes")"
  [ -z "$node_line" ] || tr ' ' '\n' <<<"$node_line"
  echo "made=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$dir/manifest"
du -b "$dir"/* | sed 's/^/size /'
echo "total $(du -sb "$dir" | cut -f1) bytes in $dir"
