/**
 * The launch without a shell (SPEC "Launch", "Distribution"): the single
 * executable, or the one-file build on a Node with process.execve (22.15+),
 * replaces itself with the launcher. Same pid, the launcher's exit status
 * is the process's; Node's own descriptors are close-on-exec (so, by Node's
 * start, are the caller's 3 to 15: the README says so).
 *
 * Three things Node does not give back by itself:
 * - Node ignores SIGPIPE and SIGXFSZ from its start, and an ignored signal
 *   stays ignored across execve(2): torchrun would inherit both. A handled
 *   signal is reset to its default by the exec, so a listener on each puts
 *   them back where the caller's launch would have them.
 * - process.execve encodes every word as UTF-8, so bytes that are not
 *   (byte-string.ts's escapes, read from /proc/self) cannot pass through
 *   it. Then /bin/sh rebuilds each such word with printf from octal escapes
 *   and env(1) execs the launcher with exactly the environment given:
 *   two more execs in the same process, so pid, descriptors and signals
 *   are as on the direct path.
 * - A file that is neither a program nor a #! script (a shell script
 *   without its #! line) fails execve(2) with ENOEXEC, which aborts Node
 *   (a core dump, 134); execvp(3) and every shell run such a file with
 *   /bin/sh instead, and so does this.
 */
import { accessSync, constants } from 'node:fs';
import { encodeBytes } from '../byte-string.js';
import { ConfigError } from '../errors.js';
import { singleQuoted } from '../shell-words.js';
import { fileHead, findLauncher } from './find-launcher.js';

type Execve = (file: string, args: string[], env: Record<string, string>) => never;

/** Signals Node sets to SIG_IGN at its start (node.cc PlatformInit), which an exec would keep. */
const IGNORED_BY_NODE = ['SIGPIPE', 'SIGXFSZ'] as const;

const SHELL = '/bin/sh';

export function execLauncher(file: string, words: string[], env: Record<string, string>): never {
  const execve = (process as { execve?: Execve }).execve;
  if (execve === undefined) {
    throw new ConfigError(
      `this Node (${process.version}) cannot exec the launcher (process.execve is Node 22.15+): start nccl-run with its bin/nccl-run script, or use env/--dry-run for the variables`,
    );
  }
  const entries = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  const rawBytes = [...words, ...entries].some(holdsRawBytes);
  const script = !rawBytes && !execsItself(file);
  if (!rawBytes && !script) {
    resetNodeSignals();
    return execve(file, words, env);
  }
  // Checked here, since a failed execve aborts Node: one line instead of a core dump.
  try {
    accessSync(SHELL, constants.X_OK);
  } catch {
    const why = rawBytes
      ? "torchrun's arguments or environment hold bytes that are not UTF-8, which only it can pass on"
      : `the launcher ${file} has no #! line, so only a shell can run it`;
    throw new ConfigError(
      `${why}, and ${SHELL} is missing: ${rawBytes ? 'use UTF-8' : 'give the launcher a #! line'}, or use the npm package's bin/nccl-run`,
    );
  }
  if (script) {
    resetNodeSignals();
    return execve(SHELL, ['sh', file, ...words.slice(1)], env);
  }
  const envTool = findLauncher('env', env.PATH ?? process.env.PATH);
  resetNodeSignals();
  return execve(
    SHELL,
    ['sh', '-c', rebuildScript([envTool, '-i', '--', ...entries, file, ...words.slice(1)])],
    {},
  );
}

/** An ELF program or a #! script: what the kernel execs itself; anything else is ENOEXEC. */
function execsItself(file: string): boolean {
  const magic = fileHead(file, 4);
  // Not readable (execute-only): left to the kernel, which needs no read permission for a program.
  if (magic === null) return true;
  return magic.equals(Buffer.from('\x7fELF', 'latin1')) || magic.subarray(0, 2).toString() === '#!';
}

function resetNodeSignals(): void {
  for (const signal of IGNORED_BY_NODE) process.on(signal, () => {});
}

/** A string carrying bytes that are not UTF-8 (byte-string.ts's lone surrogates U+DC80-U+DCFF). */
function holdsRawBytes(text: string): boolean {
  return /[\udc80-\udcff]/.test(text);
}

/**
 * A POSIX sh script, itself valid UTF-8, that execs `words` byte for byte:
 * a word with raw bytes is printf's output of its octal escapes, with a
 * final `x` that keeps $(...) from dropping trailing newlines.
 */
export function rebuildScript(words: string[]): string {
  const lines = ['set --'];
  for (const word of words) {
    if (!holdsRawBytes(word)) {
      lines.push(`set -- "$@" ${singleQuoted(word)}`);
      continue;
    }
    lines.push(`w=$(printf '${printfFormat(encodeBytes(word))}x')`);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${w%x}, not a template
    lines.push('set -- "$@" "${w%x}"');
  }
  lines.push('exec "$@"');
  return lines.join('\n');
}

/** printf's format for exactly these bytes: printable ASCII as itself, every other byte as \ooo. */
function printfFormat(bytes: Uint8Array): string {
  let format = '';
  for (const byte of bytes) {
    const char = String.fromCharCode(byte);
    format +=
      byte >= 0x20 && byte < 0x7f && !"'\\%".includes(char)
        ? char
        : `\\${byte.toString(8).padStart(3, '0')}`;
  }
  return format;
}
