/**
 * Which file dlopen(NAME) opens, as glibc's loader searches (elf/dl-load.c
 * _dl_map_object, and `ld.so --help`'s "Shared library search path"), from
 * files only:
 * 1. a NAME holding a `/` is a path, relative to the working folder;
 * 2. LD_LIBRARY_PATH: folders split on `:` and `;`, an empty one meaning
 *    the working folder (fillin_rpath);
 * 3. the calling library's DT_RUNPATH (the caller passes it, where known);
 * 4. /etc/ld.so.cache (ld-so-cache.ts), when the file it names is there;
 * 5. the system folders: Debian's multiarch ones and /lib, /usr/lib where
 *    /usr/lib/TRIPLET exists (Debian, Ubuntu), else /lib64 and /usr/lib64.
 * Not modelled: glibc-hwcaps and legacy hwcap subfolders, $ORIGIN/$LIB in
 * LD_LIBRARY_PATH, a caller's DT_RPATH, a file of the wrong ELF class (the
 * loader passes over it; nccl-run takes it as found), and libraries already
 * loaded under that name.
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { attempt } from './attempt.js';
import { readLdSoCache } from './ld-so-cache.js';

export type LibraryVia = 'path' | 'LD_LIBRARY_PATH' | 'RUNPATH' | 'ld.so.cache' | 'system folder';

export interface FoundLibrary {
  /** The file, as the loader names it (not resolved through links). */
  path: string;
  via: LibraryVia;
}

export interface LoaderView {
  env: Readonly<Record<string, string | undefined>>;
  /** Where the file system is mounted ('' for this host). */
  root?: string;
  /** The process's working folder. */
  cwd?: string;
  /** The caller's DT_RUNPATH folders, where known. */
  runpath?: readonly string[];
  /** The parsed cache, when the caller looks up several names. */
  cache?: ReadonlyMap<string, string>;
}

const TRIPLETS: Record<string, string> = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

export function findLibrary(name: string, view: LoaderView): FoundLibrary | null {
  const root = view.root ?? '';
  const cwd = view.cwd ?? process.cwd();
  const exists = (path: string) =>
    attempt(() => statSync(join(root, path), { throwIfNoEntry: false })?.isFile()) === true;
  if (name.includes('/')) {
    const path = resolve(cwd, name);
    return exists(path) ? { path, via: 'path' } : null;
  }
  const inFolders = (folders: readonly string[], via: LibraryVia): FoundLibrary | null => {
    for (const folder of folders) {
      const path = join(resolve(cwd, folder), name);
      if (exists(path)) return { path, via };
    }
    return null;
  };
  const cached = (view.cache ?? readLdSoCache(root)).get(name);
  return (
    inFolders(ldLibraryPath(view.env.LD_LIBRARY_PATH), 'LD_LIBRARY_PATH') ??
    inFolders(view.runpath ?? [], 'RUNPATH') ??
    (cached !== undefined && exists(cached) ? { path: cached, via: 'ld.so.cache' } : null) ??
    inFolders(systemFolders(root), 'system folder')
  );
}

/** LD_LIBRARY_PATH's folders; an empty element is the working folder. */
export function ldLibraryPath(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  return value.split(/[:;]/).map((folder) => (folder === '' ? '.' : folder));
}

/** The loader's built-in folders (glibc's SYSTEM_DIRS as the distribution builds it). */
export function systemFolders(root = '', arch: string = process.arch): string[] {
  const triplet = TRIPLETS[arch];
  const multiarch =
    triplet !== undefined &&
    attempt(() => statSync(join(root, '/usr/lib', triplet)).isDirectory()) === true;
  return multiarch && triplet !== undefined
    ? [`/lib/${triplet}`, `/usr/lib/${triplet}`, '/lib', '/usr/lib']
    : ['/lib64', '/usr/lib64'];
}
