/**
 * Which torch and which NCCL the job will run (SPEC "The stack"), read
 * before deciding, from files only: through the wrappers the launcher is
 * given in (torch/launcher-wrappers.ts), the torch of the Python the
 * launcher runs (torch/find-torch.ts), and the NCCL that torch will load
 * (nccl/find-nccl.ts). The torch picks torchrun's option table, defaults
 * and store-host rule; the NCCL picks its interface-selection rules
 * (nccl/releases.ts).
 *
 * A torch nccl-run cannot read (inside a SIF image, behind a site's
 * wrapper script) may be declared (--torch-version). A declaration the
 * launcher's own torch/version.py contradicts is a warning, and the file
 * wins: it is the torch that launcher runs, while a declaration is often a
 * site-wide setting (NCCL_RUN_TORCH_VERSION, an env file) meant for the
 * launchers that cannot be read.
 */
import { findNccl, type NcclLibrary } from '../nccl/find-nccl.js';
import { findEnvPlugin } from '../nccl/unseen-settings.js';
import { type Origin, originText } from '../origin.js';
import { findTorch, type TorchInstall } from '../torch/find-torch.js';
import { unwrapLauncher } from '../torch/launcher-wrappers.js';
import type { TorchEntry } from '../torch/torchrun-table.js';
import { majorMinor } from '../version-order.js';

export interface StackTorch extends TorchInstall {
  /** How its version is known: read from its torch/version.py, declared by the user, or not at all. */
  known: 'read' | 'declared' | 'unknown';
  /** The wrappers the launcher was read through, outermost first ("conda run -n train"). */
  via: string[];
  /** torchrun (run.py), or `python -m torch.distributed.launch`, whose parser adds --use-env. */
  entry: TorchEntry;
}

export interface Stack {
  torch: StackTorch;
  nccl: NcclLibrary;
  /** The libnccl-env.so that NCCL will load (unseen-settings.ts); null when none. */
  envPlugin: string | null;
  /** What reading it showed the user should hear: a declaration its torch contradicts. */
  warnings: string[];
  /** The wrapper that starts torchrun with a clean environment (`apptainer exec --cleanenv`); null when none. */
  clearedBy: string | null;
}

export interface StackOptions {
  /** Where the file system is mounted: '' for this host, a fixture tree in tests. */
  root?: string;
  /** The folder the launcher starts in (uv's and pixi's project is found from it). */
  cwd?: string;
  /** --torch-version and where it was set; null when not. */
  declared?: { version: string; origin: Origin } | null;
}

/** launcher: --torchrun's words; env: the job's environment (PATH, PYTHONPATH, LD_LIBRARY_PATH, ...). */
export function readStack(
  launcher: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  { root = '', cwd = process.cwd(), declared = null }: StackOptions = {},
): Stack {
  const unwrapped = unwrapLauncher(launcher, env, cwd, root);
  if ('unreadable' in unwrapped) {
    const torch: TorchInstall = {
      version: null,
      source: unwrapped.unreadable,
      sitePackages: null,
      prefix: null,
    };
    return {
      torch: withDeclared(torch, declared, unwrapped.via, entryOf(launcher)).torch,
      nccl: {
        version: null,
        source: `not read: the launcher runs inside ${unwrapped.via.at(-1) ?? launcher[0]}, which nccl-run cannot see into`,
        library: null,
      },
      envPlugin: null,
      warnings: [],
      clearedBy: unwrapped.clears,
    };
  }
  const found = findTorch(unwrapped.words, unwrapped.env, unwrapped.root);
  const nccl = findNccl(found, unwrapped.env, unwrapped.root);
  const { torch, warnings } = withDeclared(
    found,
    declared,
    unwrapped.via,
    entryOf(unwrapped.words),
  );
  return {
    torch,
    nccl,
    envPlugin: findEnvPlugin(nccl, unwrapped.env, unwrapped.root),
    warnings,
    clearedBy: unwrapped.clears,
  };
}

function withDeclared(
  found: TorchInstall,
  declared: StackOptions['declared'],
  via: string[],
  entry: TorchEntry,
): { torch: StackTorch; warnings: string[] } {
  if (found.version !== null) {
    const torch: StackTorch = { ...found, known: 'read', via, entry };
    if (declared === null || declared === undefined) return { torch, warnings: [] };
    if (majorMinor(declared.version) === majorMinor(found.version)) return { torch, warnings: [] };
    return {
      torch,
      warnings: [
        `${originText(declared.origin)} ${declared.version} contradicts the torch ${found.version} this launcher runs (${found.source}): nccl-run follows the file; drop the declaration for this launcher, or check --torchrun`,
      ],
    };
  }
  if (declared === null || declared === undefined) {
    return { torch: { ...found, known: 'unknown', via, entry }, warnings: [] };
  }
  return {
    torch: {
      ...found,
      version: declared.version,
      source: `declared by ${originText(declared.origin)}; nccl-run cannot read it: ${found.source}`,
      known: 'declared',
      via,
      entry,
    },
    warnings: [],
  };
}

/** torch.distributed.launch where the launcher runs that module (`-m torch.distributed.launch`). */
function entryOf(words: readonly string[]): TorchEntry {
  const at = words.indexOf('-m');
  const module = at >= 0 ? (words[at + 1] ?? '') : '';
  const glued = words.find((word) => word.startsWith('-mtorch.'))?.slice(2) ?? '';
  return module === 'torch.distributed.launch' || glued === 'torch.distributed.launch'
    ? 'launch'
    : 'run';
}
