/**
 * What audit reads: files, folders (every file in them, as `--nccl-log DIR`
 * leaves one per process, `%h.%p.log`), or standard input for `-` or no path
 * at all (`kubectl logs pod | nccl-run audit`). A path that cannot be read
 * is exit 66, naming it (sysexits' EX_NOINPUT).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { NothingToReadError } from '../errors.js';
import type { SourceText } from './rank-record.js';

export async function readSources(
  paths: readonly string[],
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<SourceText[]> {
  if (paths.length === 0) return [{ source: '-', text: await text(stdin) }];
  const sources: SourceText[] = [];
  for (const path of paths) {
    if (path === '-') sources.push({ source: '-', text: await text(stdin) });
    else sources.push(...(await readPath(path)));
  }
  return sources;
}

async function readPath(path: string): Promise<SourceText[]> {
  try {
    if (!(await stat(path)).isDirectory())
      return [{ source: path, text: await readFile(path, 'utf8') }];
    const entries = await readdir(path, { withFileTypes: true });
    const nested = await Promise.all(
      entries
        .filter((entry) => entry.isFile() || entry.isDirectory())
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((entry) => readPath(join(path, entry.name))),
    );
    return nested.flat();
  } catch (error) {
    if (error instanceof NothingToReadError) throw error;
    throw new NothingToReadError(`audit: cannot read ${path}: ${(error as Error).message}`);
  }
}
