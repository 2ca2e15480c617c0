#!/bin/bash
# run.sh VERSION ARGS...: torchrun of a torch on this machine, in its own netns, killed after T s.
v=$1; shift
case $v in
  1.13) root=/ ; extra="--redirects 1 --tee 1";;
  2.6) root=/var/cache/nccl-run-lab/trixie-b078087c9d34; extra="";;
  2.14) root=/var/cache/nccl-run-lab/sid-499b9b85d125; extra="";;
esac
ns=exp$$
ip netns add $ns; ip -n $ns link set lo up
mkdir -p /etc/netns/$ns; printf '127.0.0.1 localhost\n127.0.1.1 expnode\n::1 localhost\n' > /etc/netns/$ns/hosts
[ "$v" = 1.13 ] || export PYTHONPATH=/work/lead/test/lab/python USE_LIBUV=0
out=/tmp/exp-$$.log
ip netns exec $ns unshare --uts sh -c "hostname expnode; exec /work/lead/test/lab/torchrun-in-root.sh $root $extra $* /work/lead/.exp/port0.py" >$out 2>&1 &
pid=$!
for i in $(seq 1 ${T:-20}); do sleep 1; kill -0 $pid 2>/dev/null || break; done
if kill -0 $pid 2>/dev/null; then echo "STILL RUNNING after ${T:-20}s: killed"; pkill -9 -f "exp/port0.py"; fi
wait $pid; echo "exit=$?"
grep -v "^\s*$" $out | grep -iv "warning\|^\*\*\*\|OMP_NUM" | tail -${L:-5}
ip netns del $ns; rm -rf /etc/netns/$ns
