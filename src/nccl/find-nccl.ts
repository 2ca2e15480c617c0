/**
 * The NCCL the job's torch will load (SPEC "The stack"), in the order its
 * libraries find one, from files only:
 * 1. a pip wheel's `nvidia/nccl/lib/libnccl.so.2` beside the torch package
 *    (torch's RUNPATH `$ORIGIN/../../nvidia/nccl/lib`), its version from
 *    the `nvidia_nccl_cu*-X.Y.Z.dist-info` folder pip wrote (the library is
 *    no link to a versioned file, and no 200 MB library is scanned);
 * 2. conda's `$PREFIX/lib` (conda's torch links with RPATH `$ORIGIN/..` into
 *    its prefix), its version from the link or `conda-meta/nccl-X.Y.Z-*.json`;
 * 3. the first libnccl.so.2 on the library path and in the system's folders
 *    (host/library-dirs.ts), its version from the versioned file it links to.
 * NCCL_VERSION describes the system's NCCL in NVIDIA's images: it counts
 * only where the library found is the system's and its file names no
 * version, or where no library is found at all, never for a wheel's or
 * conda's.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { attempt } from '../host/attempt.js';
import { libraryDirs } from '../host/library-dirs.js';
import type { TorchInstall } from '../torch/find-torch.js';
import { compareVersions } from '../version-order.js';

export interface NcclLibrary {
  /** X.Y.Z; null when unknown (then the newest rules apply). */
  version: string | null;
  /** Where the version was read: a dist-info folder, a library file, NCCL_VERSION; or why it is unknown. */
  source: string;
  /** The libnccl.so.2 that will load; null when none was found. */
  library: string | null;
}

export interface NcclVersion {
  /** X.Y.Z */
  version: string;
  /** NCCL_VERSION, or the file it was read from. */
  source: string;
}

const SONAME = 'libnccl.so.2';
const VERSIONED = /^libnccl\.so\.(\d+\.\d+\.\d+)$/;
const WHEEL_DIST_INFO = /^nvidia_nccl_cu\d+-(\d+\.\d+\.\d+)(?:\.[\w.]+)?\.dist-info$/;
const CONDA_META = /^nccl-(\d+\.\d+\.\d+)(?:\.\d+)?-.*\.json$/;

export function findNccl(
  torch: TorchInstall,
  env: Readonly<Record<string, string | undefined>>,
  root = '',
): NcclLibrary {
  if (torch.sitePackages !== null) {
    const wheel = versionedLibrary(join(torch.sitePackages, 'nvidia', 'nccl', 'lib'), root);
    if (wheel !== null) {
      const found = folderVersion(torch.sitePackages, WHEEL_DIST_INFO, root);
      return known(wheel.file, found ?? wheel.version, 'pip wheel, no nvidia_nccl_cu* dist-info');
    }
  }
  const condaMeta = torch.prefix === null ? null : join(torch.prefix, 'conda-meta');
  if (torch.prefix !== null && condaMeta !== null && isFolder(condaMeta, root)) {
    const conda = versionedLibrary(join(torch.prefix, 'lib'), root);
    if (conda !== null) {
      const found = conda.version ?? folderVersion(condaMeta, CONDA_META, root);
      return known(conda.file, found, 'conda, no nccl package in conda-meta');
    }
  }
  const system = libraryPathNccl(env, root);
  const declared = declaredNcclVersion(env);
  if (system !== null) {
    return known(system.file, system.version ?? declared, 'its file names no version');
  }
  if (declared !== null)
    return { version: declared.version, source: declared.source, library: null };
  return {
    version: null,
    source: 'no libnccl.so.2 found beside torch or on the library path',
    library: null,
  };
}

function known(library: string, version: NcclVersion | null, unknown: string): NcclLibrary {
  return version === null
    ? { version: null, source: `${library} (${unknown})`, library }
    : { version: version.version, source: version.source, library };
}

/** The version in the name of the one folder entry matching `pattern` (the newest when several). */
function folderVersion(dir: string, pattern: RegExp, root: string): NcclVersion | null {
  const found = (attempt(() => readdirSync(join(root, dir))) ?? [])
    .map((entry) => ({ entry, version: pattern.exec(entry)?.[1] }))
    .filter((match): match is { entry: string; version: string } => match.version !== undefined)
    .sort((a, b) => compareVersions(b.version, a.version))[0];
  return found === undefined ? null : { version: found.version, source: join(dir, found.entry) };
}

function isFolder(dir: string, root: string): boolean {
  return attempt(() => readdirSync(join(root, dir))) !== undefined;
}

/** NCCL_VERSION as NVIDIA's images set it: X.Y.Z, any `-1` or `+cuda12.4` suffix ignored. */
export function declaredNcclVersion(
  env: Readonly<Record<string, string | undefined>>,
): NcclVersion | null {
  const declared = /^(\d+\.\d+\.\d+)(?:[-+].*)?$/.exec(env.NCCL_VERSION ?? '')?.[1];
  return declared === undefined ? null : { version: declared, source: 'NCCL_VERSION' };
}

/**
 * The first libnccl.so.2 on the library path and in the system's folders,
 * and the version its link names (null: a file that is no link to a
 * versioned one); null when there is none.
 */
export function libraryPathNccl(
  env: Readonly<Record<string, string | undefined>>,
  root = '',
): { file: string; version: NcclVersion | null } | null {
  for (const dir of libraryDirs(env, root)) {
    const found = versionedLibrary(dir, root);
    if (found !== null) return found;
  }
  return null;
}

/** libnccl.so.2 in one folder and the versioned file it links to; null when the folder has none. */
export function versionedLibrary(
  dir: string,
  root = '',
): { file: string; version: NcclVersion | null } | null {
  const target = linkTarget(join(root, dir, SONAME));
  if (target === 'missing') return null;
  const version = target === null ? undefined : VERSIONED.exec(target)?.[1];
  return {
    file: join(dir, SONAME),
    version: version === undefined ? null : { version, source: join(dir, target as string) },
  };
}

/**
 * The file a link names, one readlink: no listing of a folder that holds
 * thousands of libraries at every start. null: the file is there but no link.
 */
function linkTarget(path: string): string | null | 'missing' {
  try {
    return basename(readlinkSync(path));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EINVAL' ? null : 'missing';
  }
}
