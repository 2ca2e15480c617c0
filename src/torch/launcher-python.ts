/**
 * The Python the launcher runs (SPEC "The stack"), read from files only: the
 * interpreter torchrun's `#!` line names (through `/usr/bin/env NAME`, found
 * on the job's PATH as env(1) finds it, and through pip's `/bin/sh`
 * trampoline for interpreter paths longer than the kernel's `#!` limit), or
 * the launcher itself when it is a Python (`--torchrun 'python3 -m
 * torch.distributed.run'`). No Python is started.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { attempt } from '../host/attempt.js';

export interface LauncherPython {
  /** The interpreter's path, as the kernel runs it (symlinks not resolved: a venv's bin/python). */
  interpreter: string;
  /** Its options on the `#!` line (`-s`, `-E`, `-I`), which change sys.path. */
  flags: string[];
  /** How it was found, for explain: "the #! line of /usr/bin/torchrun". */
  via: string;
}

/** execvp(3)'s search when the environment has no PATH. */
const DEFAULT_PATH = '/bin:/usr/bin';
/** pip's launcher for long paths: `#!/bin/sh` then `'''exec' "/path/python" "$0" "$@"`. */
const SH_TRAMPOLINE = /^'''exec' "?([^"\s]+)"? /;

/** root: where the file system is mounted ('' for this host; a fixture tree in tests). */
export function launcherPython(
  words: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  root = '',
): LauncherPython | { problem: string } {
  const [command] = words;
  if (command === undefined || command === '') return { problem: 'the launcher command is empty' };
  const file = onPath(command, env.PATH, root);
  if (file === null) return { problem: `the launcher ${command} is not on PATH` };
  const [first = '', second = ''] = headLines(join(root, file));
  if (!first.startsWith('#!')) {
    return isPythonName(file)
      ? { interpreter: file, flags: [], via: `the launcher ${file}` }
      : { problem: `the launcher ${file} is neither a Python nor a script with a #! line` };
  }
  const [program = '', ...args] = first.slice(2).trim().split(/\s+/);
  const via = `the #! line of ${file}`;
  if (basename(program) === 'env') {
    const name = args.find((arg) => !arg.startsWith('-') && !arg.includes('='));
    const found = name === undefined ? null : onPath(name, env.PATH, root);
    if (found === null) return { problem: `${via} names ${name ?? 'no program'}, not on PATH` };
    return checked({
      interpreter: found,
      flags: args.slice(args.indexOf(name as string) + 1),
      via,
    });
  }
  const trampoline = basename(program) === 'sh' ? SH_TRAMPOLINE.exec(second)?.[1] : undefined;
  if (trampoline !== undefined) return checked({ interpreter: trampoline, flags: [], via });
  return checked({ interpreter: program, flags: args, via });
}

function checked(found: LauncherPython): LauncherPython | { problem: string } {
  return isPythonName(found.interpreter)
    ? found
    : { problem: `${found.via} names ${found.interpreter}, which is not a Python` };
}

function isPythonName(file: string): boolean {
  return /^python(\d+(\.\d+)?)?$/.test(basename(file));
}

/** execvp(3)'s lookup: a name with a slash is itself; else the first regular file on PATH. */
function onPath(command: string, path: string | undefined, root: string): string | null {
  if (command.includes('/')) return isFile(join(root, command)) ? command : null;
  for (const dir of (path ?? DEFAULT_PATH).split(delimiter)) {
    const candidate = join(dir === '' ? '.' : dir, command);
    if (isFile(join(root, candidate))) return candidate;
  }
  return null;
}

/** A folder on the way this user may not search (EACCES) holds nothing for it, as for execvp. */
function isFile(path: string): boolean {
  return attempt(() => statSync(path, { throwIfNoEntry: false })?.isFile()) === true;
}

/** The first two lines of a file: 512 bytes are enough for a `#!` line and pip's trampoline. */
function headLines(path: string): string[] {
  const head = Buffer.alloc(512);
  const length =
    attempt(() => {
      const fd = openSync(path, 'r');
      try {
        return readSync(fd, head);
      } finally {
        closeSync(fd);
      }
    }) ?? 0;
  return head.toString('latin1', 0, length).split('\n', 2);
}
