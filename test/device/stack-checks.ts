/**
 * The GPU check's (a) (issue 31): the stack nccl-run read from files, with
 * no Python started, agrees with what the running torch says about itself
 * (test/device/stack.py): the torch of the venv torchrun's #! line names,
 * and the NCCL of its nvidia-nccl-cu* wheel, which torch loads.
 */
import { dirname } from 'node:path';
import { type Row, row } from './rows.js';

/** What `nccl-run explain --json` says about the stack (SPEC "Outputs"). */
export interface ExplainedStack {
  torch: { version: string | null; source: string };
  nccl: { version: string | null; source: string; library: string | null };
}

/** What the torchrun's own Python says about itself (test/device/stack.py). */
export interface PythonStack {
  executable: string;
  prefix: string;
  basePrefix: string;
  torch: string;
  torchFile: string;
  /** torch.cuda.nccl.version(), as X.Y.Z; null when this torch has no NCCL. */
  ncclRuntime: string | null;
  /** The installed nvidia-nccl-cu* distribution; null when none. */
  ncclWheel: { name: string; version: string; distInfo: string | null } | null;
  /** The libnccl files mapped into the process once torch is imported. */
  loadedNccl: string[];
}

/** torchrun, and the interpreter its `#!` line names (read by gpu-check.sh). */
export interface Launcher {
  torchrun: string;
  interpreter: string;
}

/** realpath, or the path itself when it does not resolve. */
export type Resolve = (path: string) => string;

export function stackRows(
  explained: ExplainedStack,
  python: PythonStack,
  launcher: Launcher,
  resolve: Resolve,
): Row[] {
  const same = (a: string | null, b: string | null) =>
    a !== null && b !== null && resolve(a) === resolve(b);
  const venv = python.prefix === python.basePrefix ? 'not a venv' : `venv ${python.prefix}`;
  const torchVersionFile = `${dirname(python.torchFile)}/version.py`;
  const wheel = python.ncclWheel;
  const versions = [explained.nccl.version, wheel?.version ?? null, python.ncclRuntime];
  return [
    row(
      "a) torchrun's #!",
      same(launcher.interpreter, python.executable),
      `${launcher.torchrun} names ${launcher.interpreter}; that Python is ${python.executable} (${venv})`,
    ),
    row(
      'a) torch version',
      explained.torch.version !== null && explained.torch.version === python.torch,
      `nccl-run read ${explained.torch.version ?? `nothing (${explained.torch.source})`}; torch.__version__ is ${python.torch}`,
    ),
    row(
      'a) torch source',
      same(explained.torch.source, torchVersionFile),
      `nccl-run read ${explained.torch.source}; torch imports from ${dirname(python.torchFile)}`,
    ),
    row(
      'a) NCCL version',
      versions.every((version) => version !== null && version === versions[0]),
      `nccl-run read ${explained.nccl.version ?? 'none'}; ${wheel === null ? 'no nvidia-nccl-cu* wheel' : `${wheel.name} is ${wheel.version}`}; torch.cuda.nccl.version() is ${python.ncclRuntime ?? 'none'}`,
    ),
    row(
      'a) NCCL source',
      same(explained.nccl.source, wheel?.distInfo ?? null),
      `nccl-run read ${explained.nccl.source}; pip's record is ${wheel?.distInfo ?? 'missing'}`,
    ),
    row(
      'a) NCCL library',
      explained.nccl.library !== null &&
        python.loadedNccl.some((file) => same(file, explained.nccl.library)),
      `nccl-run found ${explained.nccl.library ?? 'none'}; torch mapped ${python.loadedNccl.join(', ') || 'no libnccl'}`,
    ),
  ];
}
