/**
 * nccl-run's exit statuses (SPEC "Exit status"), each once, with what it
 * means: the typed errors (errors.ts) take their status from here, --help's
 * summary and the README's table are written from here, and the shell entry
 * (bin/nccl-run), which cannot import it, is held to it by a test
 * (test/unit/exit-status.test.ts), as is the README. The shell's own
 * conventions come first: torchrun's status passes through, a signal death
 * is 128 + N (tini's and execa's rule, STYLE.md §3).
 */

export interface ExitStatus {
  code: number;
  /** As --help says it, in a few words. */
  brief: string;
  /** As the README's table says it: every case that ends so. */
  meaning: string;
}

function status(code: number, brief: string, meaning: string): ExitStatus {
  return { code, brief, meaning };
}

export const EXIT_STATUS = {
  ok: status(
    0,
    'success',
    'a command that does not launch (explain, env, check, init, --dry-run) succeeded',
  ),
  usage: status(
    64,
    'bad command line',
    "bad command line: a bad option value; a typo of an nccl-run option (`--ifcae`), one of its options after torchrun's, a boolean given a separate value (`--dry-run false`), a torchrun option nccl-run does not know whose value could be the script",
  ),
  noInput: status(
    66,
    'audit: no NCCL line to read',
    '`audit`: no NCCL INFO line in what it was given (NCCL_DEBUG must be INFO: `--nccl-log DIR`), or a path it cannot read',
  ),
  unresolvableMaster: status(
    68,
    'master name does not resolve',
    "the master's name does not resolve (where the check waits for the master: after retrying within `--verify-timeout` a DNS that does not answer, or a Kubernetes pod's name not there yet)",
  ),
  noInterface: status(
    69,
    'no usable interface',
    'no usable interface; an explicit interface is missing, down or unusable; the interface that reaches the master must be rejected; `--require-transport` unmet for missing hardware or device files',
  ),
  internal: status(
    70,
    'a bug in nccl-run',
    'a bug in nccl-run (please report it); its program files missing beside `bin/nccl-run`; a `node` on PATH that is not Node.js 20.12+ (it exited 0 without handing the launch over); a single executable whose Node is not the one it was built for',
  ),
  unreachable: status(
    75,
    'master or peer unreachable; audit failure',
    "verification failed: the master or a peer is unreachable over the chosen interface; `audit`: a failure found in NCCL's lines",
  ),
  config: status(
    78,
    'bad configuration',
    "bad configuration: an `NCCL_RUN_*` variable, the env file (also a key that is not a variable name, or an entry over the kernel's 131,071 bytes), a Gloo/TensorPipe interface that cannot work, a master only on link-local addresses, an `NCCL_IB_HCA` that matches nothing, EFA devices without a net plugin NCCL can load under `--require-transport efa`/`rdma`, conflicting settings, `node` not on PATH, no writable folder for the hand-over file",
  ),
  notExecutable: status(
    126,
    'launcher not executable',
    'the launcher is not executable (the message names the PATH searched)',
  ),
  notFound: status(
    127,
    'launcher not found',
    'the launcher is not found (the message names the PATH searched)',
  ),
} as const satisfies Record<string, ExitStatus>;

export type ExitName = keyof typeof EXIT_STATUS;

/** Each status's code by name: `EXIT.config` is 78. */
export const EXIT = Object.fromEntries(
  Object.entries(EXIT_STATUS).map(([name, entry]) => [name, entry.code]),
) as Readonly<Record<ExitName, number>>;

/** The status of a death by signal N, as a shell reports it (and as nccl-run ends, before the exec). */
export function signalStatus(signal: number): number {
  return 128 + signal;
}

/** The rows every summary of the statuses begins with: the ones that are not nccl-run's own. */
export const PASSED_THROUGH = [
  { code: "torchrun's own", meaning: 'torchrun ran (it replaced nccl-run) and exited' },
  {
    code: '128 + N',
    meaning:
      'torchrun was killed by signal N, or nccl-run was before the exec (a shell reports the death as 128 + N)',
  },
] as const;

/** --help's one paragraph, wrapped at `width` columns. */
export function exitStatusSummary(width = 80): string {
  const own = Object.values(EXIT_STATUS)
    .filter((entry) => entry.code !== 0)
    .map((entry) => `${entry.code} ${entry.brief}`);
  const words =
    `Exit status: torchrun's own; 128+N if it died of signal N; ${own.join('; ')}.`.split(' ');
  const lines = [''];
  for (const word of words) {
    const last = lines.length - 1;
    const line = lines[last] as string;
    if (line !== '' && line.length + 1 + word.length > width) lines.push(word);
    else lines[last] = line === '' ? word : `${line} ${word}`;
  }
  return lines.join('\n');
}
