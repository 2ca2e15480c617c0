/**
 * The folders dlopen(3) and ld.so search a bare library name in, in about
 * ld.so's order: LD_LIBRARY_PATH, the folders of /etc/ld.so.conf (with its
 * includes; ld.so reads their cache), then the default ones. A library's
 * own DT_RUNPATH (a pip torch finding its wheel's NCCL) comes first for
 * ld.so and is the caller's to add.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { attempt } from './attempt.js';

const DEFAULT_DIRS = ['/lib64', '/usr/lib64', '/lib', '/usr/lib'];

/** root: where the file system is mounted ('' for this host; a fixture tree in tests). */
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
