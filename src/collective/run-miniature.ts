/**
 * Starts the miniature (the job's launcher with the job's own torchrun
 * options and nccl-run's program) and waits for it, at most `timeoutMs`.
 *
 * - Its environment is the job's, plus for this run only NCCL's INFO lines
 *   into private files (NCCL_DEBUG_FILE, `%h` host and `%p` pid: one file
 *   per rank, NCCL's src/debug.cc), so that audit's reader sees what NCCL
 *   did without a line on the job's stdout.
 * - Its output is nccl-run's to keep (stdout belongs to the real job and to
 *   check --json): the last part is kept for the failure's message.
 * - It runs in a process group of its own, so that a timeout ends torchrun
 *   and every worker it started (SIGTERM, torchrun's own way to stop its
 *   workers, then SIGKILL); when nccl-run is stopped by a signal the guard
 *   below does the same and removes the private folder (SPEC "Launch": no
 *   process of nccl-run's outlives it by more than a moment).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { programText } from './program.js';

/** The miniature's share of NCCL's subsystems: what audit reads (SPEC --nccl-log). */
export const MINIATURE_NCCL_ENV = {
  NCCL_DEBUG: 'INFO',
  NCCL_DEBUG_SUBSYS: 'INIT,BOOTSTRAP,NET,ENV',
} as const;

/** How long torchrun has to stop its workers after SIGTERM before the group is killed. */
const STOP_GRACE_MS = 5_000;
/** How long the launcher's last output may take to arrive after it exited. */
const OUTPUT_GRACE_MS = 1_000;
/** The most of the miniature's output kept for a failure's message. */
const OUTPUT_KEPT = 16_384;

export interface MiniatureRun {
  /** The launcher's exit status, or 128 + N for a signal; null when it was stopped at the timeout. */
  status: number | null;
  timedOut: boolean;
  /** The last part of its stdout and stderr together. */
  output: string;
  elapsedMs: number;
}

export interface MiniatureStart {
  file: string;
  /** The launcher's own words after the file (`python3 -m torch.distributed.run`), then torchrun's argv. */
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  /** The private folder: the program, its results, NCCL's files. */
  dir: string;
  timeoutMs: number;
}

/** Where the program, its results and NCCL's lines go in the private folder. */
export function miniaturePaths(dir: string) {
  return {
    program: join(dir, 'collective.py'),
    nccl: join(dir, 'nccl'),
    result: join(dir, 'result.json'),
  };
}

export function writeProgram(dir: string): string {
  const paths = miniaturePaths(dir);
  mkdirSync(paths.nccl, { recursive: true });
  writeFileSync(paths.program, programText());
  return paths.program;
}

export function miniatureEnv(
  jobEnv: Readonly<Record<string, string>>,
  dir: string,
): Record<string, string> {
  return {
    ...jobEnv,
    ...MINIATURE_NCCL_ENV,
    NCCL_DEBUG_FILE: join(miniaturePaths(dir).nccl, '%h.%p.log'),
  };
}

const STOPPING = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;

export function runMiniature(start: MiniatureStart): Promise<MiniatureRun> {
  const began = performance.now();
  const child = spawn(start.file, [...start.argv], {
    env: start.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const guard = groupGuard(child.pid, start.dir);
  // SIGTERM: torchrun stops its workers, which torch 2.x starts in sessions
  // of their own (subprocess_handler.py start_new_session), out of reach of
  // the group's SIGKILL; the guard kills what is left of the group after.
  const onExit = () => killGroup('SIGTERM');
  const relays = STOPPING.map((signal) => {
    const relay = () => {
      killGroup('SIGTERM');
      removeHandlers();
      // nccl-run's own disposition follows (SPEC "Launch": 128 + N before the
      // exec): another listener of this signal runs now; with none, the
      // default, which this listener had suspended, is raised again.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.once(signal, relay);
    return [signal, relay] as const;
  });
  const removeHandlers = () => {
    for (const [signal, relay] of relays) process.removeListener(signal, relay);
    process.removeListener('exit', onExit);
  };
  process.on('exit', onExit);

  return new Promise((resolve, reject) => {
    let timedOut = false;
    let escalate: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      escalate = setTimeout(() => killGroup('SIGKILL'), STOP_GRACE_MS);
    }, start.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      removeHandlers();
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(escalate);
      // Whatever its workers left behind in the group goes with it.
      killGroup('SIGKILL');
      removeHandlers();
      guard?.stdin?.end('done\n');
      const status = code ?? (signal === null ? null : 128 + constants.signals[signal]);
      const finish = () =>
        resolve({
          status: timedOut ? null : status,
          timedOut,
          output,
          elapsedMs: performance.now() - began,
        });
      // Its last output, unless a worker in a session of its own (torch 2.x)
      // still holds the pipes: then not waited for.
      const grace = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, OUTPUT_GRACE_MS);
      child.once('close', () => {
        clearTimeout(grace);
        finish();
      });
    });
  });
}

/**
 * bin/nccl-run's shell ends Node with SIGKILL when a signal stops it before
 * the exec, and no handler of Node's runs then: a guard of the group, a
 * shell that waits for a line on a pipe from Node. When the pipe closes
 * without one (Node is gone, however), it stops the group as a timeout
 * does (SIGTERM, so that torchrun stops its workers; SIGKILL 2 s later) and
 * removes the private folder; when Node says the miniature has ended, it
 * leaves both.
 */
function groupGuard(pid: number | undefined, dir: string) {
  if (pid === undefined) return null;
  const guard = spawn(
    '/bin/sh',
    [
      '-c',
      'read -r line || { kill -s TERM -- "-$1"; sleep 2; kill -s KILL -- "-$1"; rm -rf -- "$2"; } 2>/dev/null',
      ...['sh', String(pid), dir],
    ],
    { stdio: ['pipe', 'ignore', 'ignore'], detached: true },
  );
  guard.unref();
  guard.on('error', () => {});
  return guard;
}
