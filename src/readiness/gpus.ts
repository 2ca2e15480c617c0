/**
 * The visible GPUs against the local ranks. Each worker takes a GPU by its
 * local rank (torch.cuda.set_device(LOCAL_RANK), NCCL's one device per rank),
 * so more ranks than GPUs CUDA shows is a certain failure after the
 * rendezvous ("invalid device ordinal"), when GPUs are visible at all; with
 * none, the job may be a CPU one (Gloo), unless --nproc-per-node gpu asks
 * for them (torchrun stops). GPUs come from files only (visible-gpus.ts).
 */
import type { CheckInput } from './check-input.js';
import { mayFail, passed, type Verdict, willFail } from './finding.js';
import { type FixByContext, fixFor } from './user-context.js';

/** NVIDIA_VISIBLE_DEVICES values that ask the container runtime for no GPU (nvidia-container-toolkit). */
const NO_GPU_REQUESTED = new Set(['', 'void', 'none']);

export function checkGpus({ needs, node, ranks, gpus }: CheckInput): Verdict {
  const fix = (count: number) => fixFor(node.contexts, gpuFixes(count));
  if (ranks.count === null) {
    return ranks.refusal === null ? passed(ranks.reason) : willFail(ranks.refusal, fix(1));
  }
  if (needs.nprocPerNode === 'cpu' || (needs.nprocPerNode === 'auto' && gpus.count === 0))
    return passed(`${ranks.reason}: a CPU job (${gpus.reason})`);
  if (gpus.count === 0) {
    const requested = node.gpus.nvidiaVisibleDevices;
    if (requested !== null && !NO_GPU_REQUESTED.has(requested.trim()))
      return mayFail(
        `NVIDIA_VISIBLE_DEVICES=${requested} asks for GPUs, yet ${gpus.reason}: the container was started without them, so a GPU job's ${ranks.count} ranks find none`,
        fix(ranks.count),
      );
    return passed(`${gpus.reason}: ${ranks.count} local ranks of a CPU job`);
  }
  const ranksSaid = `${ranks.count} local rank${ranks.count === 1 ? '' : 's'} (${ranks.reason})`;
  if (ranks.count > gpus.count)
    return willFail(
      `${ranksSaid}, but CUDA shows ${gpus.count} GPU${gpus.count === 1 ? '' : 's'}: ${gpus.reason}; local ranks ${gpus.count}-${ranks.count - 1} find no GPU of their own ("invalid device ordinal", or NCCL's "Duplicate GPU detected") after the rendezvous`,
      `--nproc-per-node ${gpus.count} (or gpu: one rank per visible GPU), or ${fix(ranks.count)}`,
    );
  return passed(
    `${ranksSaid} on ${gpus.count} visible GPU${gpus.count === 1 ? '' : 's'}: ${gpus.reason}`,
  );
}

function gpuFixes(count: number): FixByContext {
  return {
    docker: `docker run --gpus all (or --gpus '"device=0,…"' for ${count}); compose: deploy.resources.reservations.devices with capabilities: [gpu]`,
    podman: 'podman run --device nvidia.com/gpu=all (CDI)',
    kubernetes: `resources.limits: nvidia.com/gpu: ${count} in the container`,
    slurm: `srun/sbatch --gpus-per-node=${count} (or --gres=gpu:${count})`,
    host: `a CUDA_VISIBLE_DEVICES that names ${count} GPUs, or none`,
  };
}
