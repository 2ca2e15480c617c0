/**
 * The process entry of every build: only here is main()'s status turned into
 * the process's exit. process.exit, so that a handle left open can never keep
 * nccl-run alive, but only once stdout and stderr have taken every byte: a
 * slow pipe reader (`explain --json | ssh ...`) must get all of it, and
 * Node's writes to a pipe that is full are queued, not done, when exit comes.
 */
import { stopWithParent, takeHandoverFd } from '../launch/hand-over.js';
import { main } from './main.js';

/** Runs nccl-run; `beforeExit` runs last (bin/nccl-run.cjs writes its code cache there). */
export async function start({ beforeExit }: { beforeExit?: () => void } = {}): Promise<never> {
  const handoverFd = takeHandoverFd(process.env);
  if (handoverFd !== null) stopWithParent();
  const status = await main(process.argv.slice(2), process.env, handoverFd);
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  beforeExit?.();
  process.exit(status);
}

function flushed(stream: NodeJS.WriteStream): Promise<void> {
  // A write's callback runs once it and everything queued before it is written.
  return new Promise((resolve) => stream.write('', () => resolve()));
}
