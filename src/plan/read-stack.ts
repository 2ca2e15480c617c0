/**
 * Which torch and which NCCL the job will run (SPEC "The stack"), read
 * before deciding, from files only: the torch of the Python the launcher
 * runs (torch/find-torch.ts), and the NCCL that torch will load
 * (nccl/find-nccl.ts). The torch picks torchrun's option table, defaults and
 * store-host rule; the NCCL picks its interface-selection rules
 * (nccl/releases.ts).
 */
import { findNccl, type NcclLibrary } from '../nccl/find-nccl.js';
import { findEnvPlugin } from '../nccl/unseen-settings.js';
import { findTorch, type TorchInstall } from '../torch/find-torch.js';

export interface Stack {
  torch: TorchInstall;
  nccl: NcclLibrary;
  /** The libnccl-env.so that NCCL will load (unseen-settings.ts); null when none. */
  envPlugin: string | null;
}

/** launcher: --torchrun's words; env: the job's environment (PATH, PYTHONPATH, LD_LIBRARY_PATH, ...). */
export function readStack(
  launcher: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  root = '',
): Stack {
  const torch = findTorch(launcher, env, root);
  const nccl = findNccl(torch, env, root);
  return { torch, nccl, envPlugin: findEnvPlugin(nccl, env, root) };
}
