/**
 * How many workers torchrun starts on this node, as its run.py
 * determine_local_world_size resolves --nproc-per-node (read in torch 1.13,
 * 2.6 and 2.14, torch/distributed/run.py): Python's int() of the value when
 * it is one; `gpu`: torch.cuda.device_count(), and "Cuda is not available."
 * when CUDA sees no GPU; `auto`: the GPUs when CUDA sees any, else the CPUs;
 * `cpu`: the CPUs, online or of this process's affinity as the torch's
 * record says (torch/releases.ts cpuCount; an unknown torch, the newest's). Other
 * words (2.14's `xpu`, a privateuse1 backend's name) count devices nccl-run
 * does not read.
 */
import { rulesFor } from '../torch/release-for.js';
import type { NodeReadiness } from './node-readiness.js';
import { visibleGpus } from './visible-gpus.js';

export type LocalRanks =
  | { count: number; reason: string }
  /** torchrun will refuse the value on this node (its ValueError). */
  | { count: null; refusal: string; reason: string }
  /** Devices nccl-run does not count. */
  | { count: null; refusal: null; reason: string };

/** Python's int() of a str: blanks around, a sign, digits with single underscores between them. */
const PYTHON_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

export function localRanks(
  nprocPerNode: string,
  node: Pick<NodeReadiness, 'gpus' | 'cpus'>,
  torchVersion: string | null,
): LocalRanks {
  const given = `--nproc-per-node ${nprocPerNode}`;
  if (PYTHON_INT.test(nprocPerNode)) {
    return { count: Number(nprocPerNode.replaceAll('_', '')), reason: given };
  }
  const gpus = visibleGpus(node.gpus);
  const cpus = () => {
    const affinity = rulesFor(torchVersion).cpuCount === 'affinity';
    const count = affinity ? (node.cpus.allowed ?? node.cpus.online) : node.cpus.online;
    const which = affinity ? 'this process may run on' : 'online';
    return { count, label: `${count} CPU${count === 1 ? '' : 's'} (${which})` };
  };
  switch (nprocPerNode) {
    case 'gpu':
      return gpus.count === 0
        ? {
            count: null,
            refusal: `${given}: torchrun stops with "Cuda is not available." (${gpus.reason})`,
            reason: gpus.reason,
          }
        : { count: gpus.count, reason: `${given}: ${gpus.reason}` };
    case 'auto':
    case 'cpu': {
      if (nprocPerNode === 'auto' && gpus.count > 0)
        return { count: gpus.count, reason: `${given}: ${gpus.reason}` };
      const counted = cpus();
      return counted.count === null
        ? { count: null, refusal: null, reason: `${given}: the CPU count could not be read` }
        : { count: counted.count, reason: `${given}: ${counted.label}` };
    }
    default:
      return {
        count: null,
        refusal: null,
        reason: `${given} counts devices nccl-run does not read`,
      };
  }
}
