/**
 * Which NCCL the job will load, for the rules of its interface selection
 * (SPEC "NCCL's own pick"): `NCCL_VERSION`, which NVIDIA's images set
 * (`2.22.3`, any `-1` or `+cuda12.4` suffix ignored); else the versioned
 * file that `libnccl.so.2` names in the first folder of the library path
 * holding it, searched in about ld.so's order: LD_LIBRARY_PATH, the folders
 * of /etc/ld.so.conf (with its includes; ld.so reads their cache), then the
 * default ones. A library's own DT_RUNPATH (a pip torch finding its wheel's
 * NCCL) comes first for ld.so and is not read here. A
 * libnccl.so.2 that is no link to a versioned file (a pip wheel's) says no
 * version: then null, and the newest rules apply.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { attempt } from './attempt.js';

export interface NcclVersion {
  /** X.Y.Z */
  version: string;
  /** NCCL_VERSION, or the library file it was read from. */
  source: string;
}

const SONAME = 'libnccl.so.2';
const VERSIONED = /^libnccl\.so\.(\d+\.\d+\.\d+)$/;
const DEFAULT_DIRS = ['/lib64', '/usr/lib64', '/lib', '/usr/lib'];

/** root: where the file system is mounted ('' for this host; a fixture tree in tests). */
export function findNcclVersion(
  env: Readonly<Record<string, string | undefined>>,
  root = '',
): NcclVersion | null {
  const declared = declaredNcclVersion(env);
  if (declared !== null) return declared;
  const found = libraryPathNccl(env, root);
  return found?.version ?? null;
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

/** The folders dlopen(3) searches a bare name in, in about ld.so's order (see above). */
export function libraryDirs(
  env: Readonly<Record<string, string | undefined>>,
  root = '',
): string[] {
  return [
    ...(env.LD_LIBRARY_PATH ?? '').split(':').filter((dir) => dir !== ''),
    ...ldSoConfDirs(root, '/etc/ld.so.conf', 0),
    ...DEFAULT_DIRS,
  ];
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

/** The folders an ld.so.conf lists, `include GLOB` followed (GLOB: a folder and `*.conf`-like name). */
function ldSoConfDirs(root: string, path: string, depth: number): string[] {
  const text = attempt(() => readFileSync(join(root, path), 'utf8'));
  if (text === undefined || depth > 4) return [];
  const dirs: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') continue;
    const include = /^include\s+(\S+)$/.exec(line)?.[1];
    if (include === undefined) {
      dirs.push(line);
      continue;
    }
    const pattern = include.startsWith('/') ? include : join(dirname(path), include);
    for (const file of expandGlob(root, pattern)) dirs.push(...ldSoConfDirs(root, file, depth + 1));
  }
  return dirs;
}

/** A `*` in the last path element only, as ld.so.conf's includes use it; sorted, as glob(3) returns. */
function expandGlob(root: string, pattern: string): string[] {
  const dir = dirname(pattern);
  const name = basename(pattern);
  if (!name.includes('*')) return [pattern];
  const [head = '', tail = ''] = name.split('*', 2);
  const names = attempt(() => readdirSync(join(root, dir))) ?? [];
  return names
    .filter((entry) => entry.startsWith(head) && entry.endsWith(tail))
    .sort()
    .map((entry) => join(dir, entry));
}
