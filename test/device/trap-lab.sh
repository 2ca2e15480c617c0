#!/usr/bin/env bash
# The GPU check's trap (issue 31): two "nodes" in network namespaces, each
# with a first interface that NCCL takes by itself and that does not reach
# the other node, and what this machine (a kernel, or gVisor) lets a script
# make at all.
#
#   trap-lab.sh probe PREFIX   one line per thing tried: "allowed|refused|missing WHAT: DETAIL"
#   trap-lab.sh up PREFIX      make the lab; on a refusal, say which step and exit 1
#   trap-lab.sh down PREFIX    remove what PREFIX made (also half-made labs)
#
# The lab: namespaces PREFIX-n0 and PREFIX-n1 are the nodes; PREFIX-w holds
# the far ends of their trap links. On each node, in kernel order:
#   lo
#   eno1    running, on a network of its own that reaches nothing of the other
#           node (198.18.100.1/24 on n0, 198.18.101.1/24 on n1): the management
#           NIC that NCCL's default (the first interface not lo or docker*)
#           takes, for its bootstrap and its sockets
#   ens3f0  the data link between the nodes (198.18.0.1/24 and 198.18.0.2/24)
# Kernel order is creation order (ifindex), so eno1 is made and moved first.
# Addresses come from the benchmarking range (198.18.0.0/15), only inside
# these namespaces. Needs root and iproute2's ip.
set -u
action=${1:?usage: trap-lab.sh probe|up|down PREFIX}
p=${2:?usage: trap-lab.sh probe|up|down PREFIX}
step_timeout=10

try() { timeout "$step_timeout" "$@" 2>&1; }

probe() {
  printf 'kernel: %s\n' "$(uname -sr)"
  if dmesg 2>/dev/null | grep -qi gvisor; then
    echo 'runtime: gVisor (dmesg says so)'
  else
    echo 'runtime: no gVisor in dmesg'
  fi
  if ! command -v ip >/dev/null; then
    echo 'missing ip: iproute2 is not installed; nothing below can be tried'
    return
  fi
  echo "allowed ip: $(ip -V 2>&1)"
  local out
  if out=$(try unshare --net true); then echo 'allowed unshare --net'; else echo "refused unshare --net: $out"; fi
  if out=$(try ip netns add "$p-probe") && out=$(try ip netns exec "$p-probe" true); then
    echo 'allowed ip netns add, ip netns exec'
  else
    echo "refused ip netns: $out"
  fi
  ip netns del "$p-probe" 2>/dev/null
  local kind
  for kind in veth dummy bridge; do
    local args=(type "$kind")
    [ "$kind" = veth ] && args+=(peer name "${p}pb")
    if out=$(try ip link add "${p}pa" "${args[@]}"); then
      echo "allowed ip link add type $kind"
    else
      echo "refused ip link add type $kind: $out"
    fi
    ip link del "${p}pa" 2>/dev/null
  done
}

# Each step of up, named, so a refusal says which.
step() {
  local out
  if ! out=$(try "$@"); then
    echo "refused: $*: $out"
    exit 1
  fi
}

up() {
  local ns
  for ns in n0 n1 w; do step ip netns add "$p-$ns"; done
  for i in 0 1; do
    step ip link add "${p}t$i" type veth peer name "${p}w$i"
    step ip link set "${p}t$i" netns "$p-n$i"
    step ip -n "$p-n$i" link set "${p}t$i" name eno1
    step ip link set "${p}w$i" netns "$p-w"
  done
  step ip link add "${p}d0" type veth peer name "${p}d1"
  for i in 0 1; do
    step ip link set "${p}d$i" netns "$p-n$i"
    step ip -n "$p-n$i" link set "${p}d$i" name ens3f0
    step ip -n "$p-n$i" link set lo up
    step ip -n "$p-n$i" addr add "198.18.10$i.1/24" dev eno1
    step ip -n "$p-n$i" addr add "198.18.0.$((i + 1))/24" dev ens3f0
    step ip -n "$p-n$i" link set eno1 up
    step ip -n "$p-n$i" link set ens3f0 up
    step ip -n "$p-w" addr add "198.18.10$i.254/24" dev "${p}w$i"
    step ip -n "$p-w" link set "${p}w$i" up
  done
  echo "up: $p-n0 and $p-n1 (eno1 the trap, ens3f0 the data link), $p-w"
}

down() {
  local ns
  for ns in n0 n1 w; do ip netns del "$p-$ns" 2>/dev/null; done
  # A veth left in this namespace by a half-made lab (deleting one end removes both).
  for link in "${p}t0" "${p}t1" "${p}d0" "${p}d1"; do ip link del "$link" 2>/dev/null; done
  return 0
}

case $action in
probe) probe ;;
up) up ;;
down) down ;;
*)
  echo "trap-lab.sh: unknown action $action (probe, up, down)" >&2
  exit 64
  ;;
esac
