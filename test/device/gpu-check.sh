#!/usr/bin/env bash
# The GPU check (issue 31): a real NCCL job through nccl-run, on a machine
# with an NVIDIA GPU and PyTorch with NCCL from pip (the device tool's
# nvidia-h200: one H200, gVisor or Firecracker, root, nothing reachable
# outside it, no Node.js). It shows
#   (a) that `nccl-run explain --json` names the torch of the venv torchrun's
#       #! line names and the NCCL of its nvidia-nccl-cu* wheel, and that both
#       agree with what the running torch says about itself;
#   (b) NCCL's data path on the interface nccl-run exported: a real
#       `torchrun --nnodes=2` (two agents, node ranks 0 and 1) launched
#       through nccl-run, both ranks on the one GPU with distinct
#       NCCL_HOSTID, so NCCL connects them with its network transport as it
#       does two nodes; an all_reduce of GPU_CHECK_MB MiB with NCCL_DEBUG=INFO,
#       whose log must put `NET/Socket : Using` and every channel's `via
#       NET/Socket` on that interface; and the bus bandwidth (nccl-tests');
#       then (issue 44) `nccl-run check --verify collective` for the same
#       two nodes, whose --json (runs/collective/, in work.tar.gz) holds
#       NCCL's lines as audit read them beside the verdict;
#   (c) where the machine lets a script make network namespaces and veth
#       links (trap-lab.sh), the trap: two namespaced nodes whose first
#       interface does not reach the other, on which torchrun alone fails and
#       the same job through nccl-run runs. What the machine allowed is
#       recorded either way.
#
# Prepare here (a machine with npm): bash test/device/prepare.sh
# (writes .gpu-check/: the official Node compressed, nccl-run's one-file build, the
# report). Then, through the device tool, from the repository root:
#   run(command="bash test/device/gpu-check.sh", carry=[".gpu-check"], timeout_s=480)
# It prints a table of its prerequisites, then of its checks, and writes
# summary.txt, report.json, explain.json, NCCL's and the agents' logs, what
# the machine allowed (netns.txt) and all it collected (work.tar.gz) to $OUT
# (a temporary folder, named at the end, when OUT is unset): 8 files, the
# most the device tool brings back. Every step has its own timeout, clamped
# so that the whole ends within GPU_CHECK_DEADLINE seconds (420).
#
# Exit status: 0 every check passed; 1 a check failed (summary.txt says
# which); 77 no GPU here, nothing was run (a machine without one, as CI);
# 78 another prerequisite is missing (named, with its fix).
#
# Settings: GPU_CHECK_PYTHON (default /opt/torch/.venv/bin/python3, else
# python3) and GPU_CHECK_TORCHRUN (default: the torchrun beside it);
# GPU_CHECK_MB (256); GPU_CHECK_DEADLINE (420); GPU_CHECK_TRAP_ALONE_S (45:
# the limit of the job alone on the trap, which hangs); GPU_CHECK_CARRIED (the
# prepared folder, default .gpu-check); GPU_CHECK_TORCHRUN_ARGS (torchrun
# options put before the job's). Variables set for the command reach the
# workers and NCCL through nccl-run and torchrun, so a rerun can add NCCL
# settings in front (NCCL_CUMEM_ENABLE=0, say, should NCCL's log blame its
# cuMem allocations under gVisor). GPU_CHECK_REHEARSAL=gloo runs every step
# without a GPU, the job on Gloo, so that the steps themselves are tested
# on a machine without one (test/e2e/gpu-check-rehearsal.test.ts); NCCL's
# checks fail there by design.
set -u
here=$(cd -- "$(dirname -- "$0")" && pwd)
repo=$(cd -- "$here/../.." && pwd)
carried=${GPU_CHECK_CARRIED:-$repo/.gpu-check}
deadline=${GPU_CHECK_DEADLINE:-420}
mb=${GPU_CHECK_MB:-256}
rehearsal=${GPU_CHECK_REHEARSAL:-}
read -r -a torchrun_args <<<"${GPU_CHECK_TORCHRUN_ARGS:-}"
backend=nccl
[ -n "$rehearsal" ] && backend=gloo
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
out=${OUT:-$work/out}
mkdir -p "$out" "$work/bin" "$work/runs"
lab=gc$$ # the trap lab's namespaces: $lab-n0, $lab-n1, $lab-w
lab_up=
agents=()

cleanup() {
  local pid
  for pid in "${agents[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  [ -z "$lab_up" ] || bash "$here/trap-lab.sh" down "$lab"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Seconds a step that wants $1 may take: what is left before the deadline,
# less 20 s for the report; 0 when under 5 s would be left.
within() {
  local want=$1 left=$((deadline - SECONDS - 20))
  [ "$left" -lt "$want" ] && want=$left
  [ "$want" -lt 5 ] && want=0
  echo "$want"
}

# One row of the prerequisite table, on stdout and in prereqs.tsv.
row() {
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$work/prereqs.tsv"
  printf '%-10s %-8s %s\n' "$1" "$2" "$3"
}

# 1. Prerequisites ----------------------------------------------------------
echo "GPU check (issue 31): prerequisites"
gpu=yes
if [ -n "$rehearsal" ]; then
  row GPU rehearsal "none needed: the job runs on Gloo, on the CPU (GPU_CHECK_REHEARSAL=$rehearsal)"
elif command -v nvidia-smi >/dev/null 2>&1 &&
  smi=$(timeout 15 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1) &&
  [ -n "$smi" ]; then
  row GPU ok "$(head -n 1 <<<"$smi")"
elif ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  row GPU ok "$(echo /dev/nvidia[0-9]*) (no nvidia-smi)"
else
  gpu=
  row GPU missing "${smi:+nvidia-smi said: $(head -n 1 <<<"$smi"); }no /dev/nvidia[0-9]* device file"
fi

py=${GPU_CHECK_PYTHON:-}
if [ -z "$py" ]; then
  if [ -x /opt/torch/.venv/bin/python3 ]; then py=/opt/torch/.venv/bin/python3; else py=$(command -v python3 || true); fi
fi
torchrun=${GPU_CHECK_TORCHRUN:-}
if [ -z "$torchrun" ]; then
  if [ -n "$py" ] && [ -x "$(dirname -- "$py")/torchrun" ]; then
    torchrun=$(dirname -- "$py")/torchrun
  else
    torchrun=$(command -v torchrun || true)
  fi
fi
# The interpreter torchrun's #! line names: directly, through env, or through
# pip's /bin/sh trampoline for long paths ('''exec' "/path/python" "$0" "$@").
interpreter=
if [ -n "$torchrun" ] && [ -f "$torchrun" ]; then
  IFS= read -r first <"$torchrun"
  if [ "${first#\#!}" != "$first" ]; then
    read -r -a words <<<"${first#\#!}"
    interpreter=${words[0]:-}
    case ${interpreter##*/} in
    env) interpreter=$(command -v "${words[1]:-python3}" || true) ;;
    sh) interpreter=$(sed -n "2s/^'''exec' \"\{0,1\}\([^\" ]*\).*/\1/p" "$torchrun") ;;
    esac
  fi
fi
problems=()
if [ -n "$torchrun" ] && [ -x "${interpreter:-/nonexistent}" ]; then
  row torchrun ok "$torchrun, whose #! names $interpreter"
else
  row torchrun missing "${torchrun:-no torchrun beside ${py:-python3} or on PATH}${interpreter:+ (its #! names $interpreter, not runnable)}"
  problems+=("torchrun and its Python: set GPU_CHECK_TORCHRUN")
fi

if [ -f "$carried/node.xz" ]; then
  if { command -v xz >/dev/null && timeout 60 xz -dc "$carried/node.xz" >"$work/bin/node"; } ||
    { [ -x "${interpreter:-/nonexistent}" ] && timeout 60 "$interpreter" -c \
      'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
      "$carried/node.xz" "$work/bin/node"; }; then
    chmod +x "$work/bin/node"
    node_from="carried in $carried/node.xz"
  fi
elif command -v node >/dev/null; then
  ln -s "$(command -v node)" "$work/bin/node"
  node_from="from PATH"
fi
if [ -n "${node_from:-}" ] && node_version=$(timeout 10 "$work/bin/node" --version 2>&1); then
  row node ok "$node_version, $node_from"
else
  row node missing "no $carried/node.xz (or it would not unpack) and no node on PATH${node_version:+: $node_version}"
  problems+=("Node.js: run test/device/prepare.sh here and carry .gpu-check")
fi
export PATH="$work/bin:$PATH"

build=$carried/nccl-run.mjs
[ -f "$build" ] || build=$repo/dist/nccl-run.mjs
cp "$repo/bin/nccl-run" "$work/bin/nccl-run" && chmod +x "$work/bin/nccl-run"
ncclrun=$work/bin/nccl-run
if [ -f "$build" ] && cp "$build" "$work/bin/nccl-run.mjs" &&
  version=$(timeout 20 "$ncclrun" --version 2>&1); then
  made=$(sed -n 's/^commit=//p' "$carried/manifest" 2>/dev/null)
  row nccl-run ok "$version, $build${made:+ (built from $made)}"
else
  row nccl-run missing "no one-file build at $carried/nccl-run.mjs or $repo/dist/nccl-run.mjs${version:+: $version}"
  problems+=("nccl-run's build: run test/device/prepare.sh here and carry .gpu-check")
fi
if [ -f "$carried/report.mjs" ]; then
  row report ok "$carried/report.mjs"
else
  row report missing "no $carried/report.mjs"
  problems+=("the report: run test/device/prepare.sh here and carry .gpu-check")
fi

summary_only() { # status message: the prerequisite table is all there is
  {
    printf 'check\tstatus\tdetail\n'
    cat "$work/prereqs.tsv"
    echo "$2"
  } >"$out/summary.txt"
  echo "$2"
  echo "summary: $out/summary.txt"
  exit "$1"
}
if [ -z "$gpu" ]; then
  summary_only 77 "no GPU here: nothing was run. This check runs on the device tool's GPU machine (docs/development.md, \"The GPU check\"); CI never runs it."
fi
if [ "${#problems[@]}" -gt 0 ]; then
  summary_only 78 "missing: $(printf '%s; ' "${problems[@]}")"
fi

t=$(within 90)
if [ "$t" -gt 0 ] && timeout "$t" "$interpreter" "$here/stack.py" >"$work/stack.json" 2>"$work/stack.err"; then
  row torch ok "$("$work/bin/node" -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
    console.log(`${s.torch}, CUDA ${s.cuda}, NCCL ${s.ncclRuntime}, ${s.device ?? "no CUDA device"}`)' "$work/stack.json")"
else
  row torch failed "$interpreter could not import torch: $(tail -n 1 "$work/stack.err" 2>/dev/null)"
fi
printf '%s\n%s\n' "$torchrun" "$interpreter" >"$work/launcher.txt"

# 2. Runs -------------------------------------------------------------------

# run_pair NAME MODE LAB MASTER PORT SECONDS [NCCL-RUN OPTIONS...]: the job's
# two torchrun agents at once, node ranks 0 and 1, each in LAB's namespace
# for it (LAB empty: this one), through nccl-run (MODE nccl-run) or alone
# (MODE alone). Beside each agent, nccl-run's explain for that node: its
# decision, and what its model says NCCL would take by itself. Writes
# runs/NAME/: agentN.log, exitN, stoppedN, explain-nodeN.json, NCCL's logs.
# Its callers send its stderr to notices.txt: bash's "Killed" notice for an
# agent stopped by a KILL, which exitN already says.
run_pair() {
  local name=$1 mode=$2 labns=$3 master=$4 port=$5 want=$6
  shift 6
  local dir=$work/runs/$name limit rank netns pids=()
  mkdir -p "$dir"
  # The underscore spellings, which every torchrun accepts (1.13 knows no other).
  local job=("${torchrun_args[@]}" --nnodes=2 --nproc_per_node=1 "--master_addr=$master" "--master_port=$port")
  local worker=("$here/allreduce.py" --mb "$mb" --backend "$backend")
  on_node() { netns=() && [ -z "$labns" ] || netns=(ip netns exec "$labns-n$1"); }
  for rank in 0 1; do
    on_node "$rank"
    timeout 20 "${netns[@]}" "$ncclrun" explain --json --verify none --torchrun "$torchrun" "$@" -- \
      "${job[@]}" "--node_rank=$rank" "${worker[@]}" >"$dir/explain-node$rank.json" 2>"$dir/explain-node$rank.err"
  done
  limit=$(within "$want")
  if [ "$limit" -eq 0 ]; then
    echo "out of time: under 5 s left before the ${deadline} s deadline" >"$dir/skipped"
    return
  fi
  local started=$SECONDS
  for rank in 0 1; do
    on_node "$rank"
    local job_env=("NCCL_HOSTID=gpu-check-node$rank" "NCCL_DEBUG_FILE=$dir/nccl-node$rank.%p.log"
      OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1)
    local launch=("$ncclrun" --nccl-debug INFO --verify-timeout 60s --torchrun "$torchrun" "$@" --)
    [ "$mode" = alone ] && launch=("$torchrun") && job_env+=(NCCL_DEBUG=INFO)
    # exec at every step: the pid held here becomes timeout's, which passes a TERM on to torchrun.
    (exec "${netns[@]}" env "${job_env[@]}" timeout -k 5 "$limit" "${launch[@]}" \
      "${job[@]}" "--node_rank=$rank" "${worker[@]}") >"$dir/agent$rank.log" 2>&1 &
    pids+=($!)
  done
  agents=("${pids[@]}")
  # When one agent fails, the other waits for a peer that is gone: 15 s, then it is stopped.
  while kill -0 "${pids[0]}" 2>/dev/null && kill -0 "${pids[1]}" 2>/dev/null; do sleep 1; done
  local ended=0 other=1 status
  kill -0 "${pids[0]}" 2>/dev/null && ended=1 other=0
  wait "${pids[$ended]}"
  status=$?
  echo "$status" >"$dir/exit$ended"
  if [ "$status" -ne 0 ]; then
    local _
    for _ in $(seq 15); do kill -0 "${pids[$other]}" 2>/dev/null || break; sleep 1; done
    if kill -TERM "${pids[$other]}" 2>/dev/null; then
      echo "stopped 15 s after node $ended's agent had failed" >"$dir/stopped$other"
    fi
  fi
  wait "${pids[$other]}"
  echo "$?" >"$dir/exit$other"
  agents=()
  # A worker that outlived its torchrun (killed before it could stop them) would hold the GPU.
  local worker_pid
  for worker_pid in $(sed -n 's/.*GPU_CHECK_ENV .*"pid": \([0-9]*\).*/\1/p' "$dir"/agent?.log); do
    kill -KILL "$worker_pid" 2>/dev/null && echo "killed worker $worker_pid, left running" >>"$dir/stopped-workers"
  done
  echo $((SECONDS - started)) >"$dir/seconds"
  # timeout's own status: 124 when its limit stopped the agent, 137 when the KILL 5 s later did.
  for rank in 0 1; do
    case $(cat "$dir/exit$rank") in
    124 | 137) [ -f "$dir/stopped$rank" ] || echo "stopped at its ${limit} s timeout" >"$dir/stopped$rank" ;;
    esac
  done
  echo "$name: agents exited $(cat "$dir/exit0") and $(cat "$dir/exit1") in $((SECONDS - started)) s"
}

free_port() {
  node -e 'const s = require("net").createServer().listen(0, () => { console.log(s.address().port); s.close(); })'
}

echo
echo "(a) and (b): the stack, and NCCL's data path between two nodes on this machine"
# The master is this machine's first IPv4 address that is not loopback, as a
# real node's is; where it has none, loopback (named, since nccl-run excludes lo).
master=$(node -e 'for (const list of Object.values(require("os").networkInterfaces()))
  for (const a of list) if (a.family === "IPv4" && !a.internal) { console.log(a.address); process.exit(0); }')
only_lo=()
[ -n "$master" ] || { master=127.0.0.1 && only_lo=(--iface lo); }
run_pair datapath nccl-run "" "$master" "$(free_port)" 150 "${only_lo[@]}" 2>>"$work/notices.txt"

# run_collective SECONDS [NCCL-RUN OPTIONS...]: issue 44's `check --verify
# collective` on the same two nodes (node ranks 0 and 1 on this machine, the
# one GPU, distinct NCCL_HOSTID): nccl-run's miniature of the job with the
# job's torchrun and NCCL, its verdict and what NCCL's lines said, in
# runs/collective/checkN.json (check --json) and checkN.log, exitN.
run_collective() {
  local want=$1
  shift
  local dir=$work/runs/collective rank limit port pids=()
  mkdir -p "$dir"
  limit=$(within "$want")
  if [ "$limit" -eq 0 ]; then
    echo "out of time: under 5 s left before the ${deadline} s deadline" >"$dir/skipped"
    return
  fi
  port=$(free_port)
  local job=("${torchrun_args[@]}" --nnodes=2 --nproc_per_node=1 "--master_addr=$master" "--master_port=$port")
  for rank in 0 1; do
    (exec env "NCCL_HOSTID=gpu-check-node$rank" OMP_NUM_THREADS=1 timeout -k 5 "$limit" \
      "$ncclrun" check --json --verify collective --verify-timeout 60s --torchrun "$torchrun" "$@" -- \
      "${job[@]}" "--node_rank=$rank" train.py) >"$dir/check$rank.json" 2>"$dir/check$rank.log" &
    pids+=($!)
  done
  for rank in 0 1; do
    wait "${pids[$rank]}"
    echo "$?" >"$dir/exit$rank"
  done
  echo "collective: checks exited $(cat "$dir/exit0") and $(cat "$dir/exit1")"
}
echo
echo "(d) --verify collective: nccl-run's miniature of the same job, its verdict"
run_collective 90 "${only_lo[@]}" 2>>"$work/notices.txt"

echo
echo "(c) the trap, where this machine lets a script make namespaces and veth links"
if command -v ip >/dev/null; then
  timeout 60 bash "$here/trap-lab.sh" probe "$lab" >"$work/netns.txt" 2>&1
  lab_up=yes # down removes a half-made lab too
  if timeout 60 bash "$here/trap-lab.sh" up "$lab" >>"$work/netns.txt" 2>&1; then
    # NCCL alone on the trap hangs or fails: 45 s on the device; the rehearsal's Gloo hangs for any limit.
    run_pair trap-alone alone "$lab" 198.18.0.1 29500 "${GPU_CHECK_TRAP_ALONE_S:-45}" 2>>"$work/notices.txt"
    run_pair trap-nccl-run nccl-run "$lab" 198.18.0.1 29501 120 2>>"$work/notices.txt"
  fi
  bash "$here/trap-lab.sh" down "$lab"
  lab_up=
else
  echo "missing ip: iproute2 is not installed here, so no namespace could be tried" >"$work/netns.txt"
fi
cat "$work/netns.txt"

# 3. Report -----------------------------------------------------------------
echo
node "$carried/report.mjs" "$work" "$out"
status=$?
# Everything the report read, for what it did not say (Node's binary left out).
tar -czf "$out/work.tar.gz" -C "$work" --exclude=./bin --exclude=./out . 2>/dev/null
echo "files: $out"
exit "$status"
