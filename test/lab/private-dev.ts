/**
 * A /dev of a mount namespace's own, for the RDMA tiers: the host's /dev
 * (devtmpfs) is shared with every other namespace, so even `mkdir
 * /dev/infiniband` as the mount point of a private tmpfs would leave an
 * empty /dev/infiniband on the host, which a later nccl-run on this machine
 * reads as "device files present" (issue 46). So the whole of /dev is a
 * tmpfs inside the namespace (`unshare -m` makes its mounts private: util-linux
 * unshare(1), --propagation defaults to private), holding what a process
 * needs, as a container's /dev does: the four character devices of
 * Documentation/admin-guide/devices.txt (major 1), /dev/fd, and the host's
 * /dev/shm bound back so that the shm readiness check reads what it would.
 * test/lab/host-traces.ts fails the suite if a trace is left anyway.
 *
 * Shell lines, run as root inside `unshare -m`; `keep` is a folder of the
 * test's own where the host's /dev/shm is bound before /dev is covered.
 */
export function privateDevLines(tag: string, keep: string): string[] {
  return [
    `mkdir -p "${keep}" && mount --bind /dev/shm "${keep}"`,
    `mount -t tmpfs -o mode=755 ${tag} /dev`,
    'mknod -m 666 /dev/null c 1 3; mknod -m 666 /dev/zero c 1 5',
    'mknod -m 666 /dev/random c 1 8; mknod -m 666 /dev/urandom c 1 9',
    'ln -s /proc/self/fd /dev/fd',
    `mkdir /dev/shm && mount --bind "${keep}" /dev/shm`,
  ];
}

/**
 * /dev/infiniband as an RDMA host's, under the private /dev of
 * privateDevLines only: uverbs0..count-1 (char 231, 192 + N:
 * drivers/infiniband/core/uverbs_main.c, IB_UVERBS_MAJOR and
 * IB_UVERBS_BASE_MINOR), and with `rdmaCm` the connection manager's node.
 */
export function infinibandLines(count: number, rdmaCm = false): string[] {
  return [
    'mkdir /dev/infiniband',
    `n=0; while [ $n -lt ${count} ]; do mknod -m 666 /dev/infiniband/uverbs$n c 231 $((192 + n)); n=$((n + 1)); done`,
    ...(rdmaCm ? ['mknod -m 666 /dev/infiniband/rdma_cm c 10 58'] : []),
  ];
}
