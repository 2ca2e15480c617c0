/**
 * The process entry of every build: only here is main()'s status turned into
 * the process's exit. process.exit, so that a handle left open can never keep
 * nccl-run alive, but only once stdout and stderr have taken every byte: a
 * slow pipe reader (`explain --json | ssh ...`) must get all of it, and
 * Node's writes to a pipe that is full are queued, not done, when exit comes.
 */

import { constants } from 'node:os';
import { signalStatus } from '../exit-status.js';
import { handNothingOver, stopWithShell, takeHandoverTarget } from '../launch/hand-over.js';
import { main } from './main.js';

/** A reader that went away (`nccl-run env | head -1`): the status a writer killed by SIGPIPE has. */
const EPIPE_STATUS = signalStatus(constants.signals.SIGPIPE);

export interface StartOptions {
  /** nccl-run's arguments; process.argv's by default. */
  argv?: readonly string[];
  /** The caller's environment; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Runs last (bin/nccl-run.cjs writes its code cache there). */
  beforeExit?: () => void;
}

export async function start({
  argv = process.argv.slice(2),
  env = process.env,
  beforeExit,
}: StartOptions = {}): Promise<never> {
  const handover = takeHandoverTarget(env);
  if (handover !== null) stopWithShell(handover);
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(EPIPE_STATUS);
    });
  }
  const status = await main(argv, env, handover);
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  if (handover !== null && status === 0) handNothingOver(handover);
  beforeExit?.();
  process.exit(status);
}

function flushed(stream: NodeJS.WriteStream): Promise<void> {
  // A write's callback runs once it and everything queued before it is written.
  return new Promise((resolve) => stream.write('', () => resolve()));
}
