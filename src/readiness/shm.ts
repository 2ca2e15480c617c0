/**
 * /dev/shm against what NCCL's shared memory will take on this node
 * (nccl-shm.ts has the formula and its sources). Refused only where nothing
 * can go there at all and several local ranks will want to (SHM not turned
 * off): NCCL's SHM transport and PyTorch's own shared tensors need it, and
 * NCCL stats /dev/shm in every communicator's init (src/init.cc fillInfo,
 * v2.22.3-1 to v2.29.7-1). Too little room is a warning with the numbers:
 * whether NCCL falls to SHM, and how many rings it builds, is its topology's
 * to decide. Docker's default is 64 MiB.
 */
import { ncclIntParam } from '../nccl/nccl-param.js';
import { mib, ncclShmNeed, ncclShmRecords } from '../nccl/nccl-shm.js';
import type { CheckInput } from './check-input.js';
import { mayFail, passed, type Verdict, willFail } from './finding.js';
import { type FixByContext, fixFor } from './user-context.js';

/** The smallest size a fix names: what NVIDIA's and DeepSpeed's guides start from. */
const MIN_SUGGESTED = 2 ** 30;

export function checkShm({ needs, node, ranks, gpus }: CheckInput): Verdict {
  const { shm } = node;
  const localRanks = ranks.count ?? 1;
  const shmOff = ncclIntParam(needs.ncclEnv.NCCL_SHM_DISABLE, 0) === 1;
  if (shm.unusable !== null) {
    const fix = fixFor(node.contexts, shmFixes(MIN_SUGGESTED));
    const evidence = `${shm.unusable}: NCCL stats it when a communicator starts (src/init.cc fillInfo) and puts its segments there, as PyTorch does its shared tensors`;
    if (localRanks >= 2 && !shmOff)
      return willFail(`${evidence}; ${localRanks} local ranks (${ranks.reason})`, fix);
    return mayFail(evidence, fix);
  }
  const have = `${shm.path}: ${mib(shm.sizeBytes)}${shm.tmpfs ? ' tmpfs' : ', not a tmpfs'}, ${mib(shm.freeBytes)} free`;
  if (gpus.count === 0)
    return passed(`${have}; no GPU is visible here, so NCCL does not run (${gpus.reason})`);

  const version =
    needs.ncclVersion === null
      ? 'NCCL (version unknown: the largest of every release nccl-run knows)'
      : `NCCL ${needs.ncclVersion}`;
  const need = ncclShmNeed(
    {
      localRanks,
      multiNode: needs.nnodes.max > 1,
      env: needs.ncclEnv,
      pageBytes: shm.blockBytes,
    },
    ncclShmRecords(needs.ncclVersion),
  );
  if (need.bytes === 0) return passed(`${have}; ${version} puts nothing there for this job`);
  const estimate = `${version} may put up to ${mib(need.bytes)} there for each communicator: ${need.terms.join('; ')}`;
  if (need.bytes > shm.freeBytes) {
    const suggested = Math.max(MIN_SUGGESTED, Math.ceil((need.bytes * 2) / 2 ** 30) * 2 ** 30);
    return mayFail(
      `${have}; ${estimate}; it fails with "failed to extend /dev/shm/nccl-XXXXXX" when that runs out`,
      fixFor(node.contexts, shmFixes(suggested)),
    );
  }
  return passed(`${have}; ${estimate}`);
}

/** Each context's way to a bigger /dev/shm, `size` bytes. */
function shmFixes(size: number): FixByContext {
  const gib = `${Math.ceil(size / 2 ** 30)}`;
  return {
    docker: `docker run --shm-size=${gib}g (or --ipc=host); compose: shm_size: ${gib}gb`,
    podman: `podman run --shm-size=${gib}g (or --ipc=host)`,
    kubernetes: `mount an emptyDir with medium: Memory (sizeLimit: ${gib}Gi) at /dev/shm in the pod`,
    slurm: `/dev/shm is the node's: remove your stale /dev/shm/nccl-* files, or ask the admins for a larger one (mount -o remount,size=${gib}G /dev/shm)`,
    host: `mount -o remount,size=${gib}G /dev/shm (as root), or remove stale /dev/shm/nccl-* files`,
  };
}
