/**
 * A process's argv and environment as the kernel holds them
 * (/proc/self/cmdline, /proc/PID/environ), in byte-string.ts's strings.
 * Node decodes its own argv and environment as UTF-8 and replaces what is
 * not, so process.argv and process.env cannot carry a Latin-1 file name or
 * a non-UTF-8 value on to torchrun; these can.
 */
import { readFileSync } from 'node:fs';
import { decodeBytes } from '../byte-string.js';

/** One environment entry, its bytes as byte-string.ts carries them. */
export type Entry = { name: string; value: string };

/** NUL-terminated kernel strings, each decoded on its own. */
function kernelStrings(file: string): string[] {
  const bytes = readFileSync(file);
  const words: string[] = [];
  let start = 0;
  for (let at = bytes.indexOf(0); at !== -1; at = bytes.indexOf(0, start)) {
    words.push(decodeBytes(bytes.subarray(start, at)));
    start = at + 1;
  }
  return words;
}

/** The arguments after the program's own name, as its caller passed them. */
export function cmdlineArguments(): string[] {
  return kernelStrings('/proc/self/cmdline').slice(1);
}

/** NAME=VALUE entries by name; the first of a name wins, as getenv(3) finds it. */
export function environEntries(pid: number | 'self' = 'self'): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  for (const text of kernelStrings(`/proc/${pid}/environ`)) {
    const equals = text.indexOf('=');
    // An entry without `=`, or with an empty name, is no variable any exec can pass on.
    if (equals <= 0) continue;
    const name = text.slice(0, equals);
    if (!entries.has(name)) entries.set(name, { name, value: text.slice(equals + 1) });
  }
  return entries;
}
