/**
 * SPEC "Launch": nccl-run passes SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1
 * and SIGUSR2 on to the launcher, each exactly once (tini's model: the
 * wrapper relays, the child decides what a signal means).
 *
 * The terminal rule. The launcher runs in nccl-run's process group, so that it
 * keeps the terminal (a background group reading the terminal would be stopped
 * by SIGTTIN, and Node cannot hand the terminal over with tcsetpgrp as tini
 * does). A Ctrl-C or Ctrl-\ therefore reaches torchrun straight from the
 * kernel; relaying it too would be torchrun's second Ctrl-C, which cuts its
 * own shutdown of the workers short. So SIGINT and SIGQUIT are not relayed
 * while nccl-run and the launcher hold the terminal's foreground; they are
 * relayed in every other case (no terminal as under Slurm, Kubernetes or
 * nohup, a background job). Node does not say who sent a signal (no
 * siginfo), so a kill(1) of nccl-run alone while it holds a terminal's
 * foreground is taken for the terminal's and not relayed: kill torchrun's pid
 * instead in that case. The four other signals are never sent by a key.
 */
import type { Logger } from '../log.js';
import { sharesTerminalForeground } from './foreground-group.js';

export const FORWARDED_SIGNALS = [
  'SIGTERM',
  'SIGINT',
  'SIGHUP',
  'SIGQUIT',
  'SIGUSR1',
  'SIGUSR2',
] as const satisfies readonly NodeJS.Signals[];

const TERMINAL_KEY_SIGNALS: ReadonlySet<NodeJS.Signals> = new Set(['SIGINT', 'SIGQUIT']);

/** What forwarding needs of the launcher: a Node ChildProcess (or execa's) fits. */
export interface SignalTarget {
  readonly pid?: number | undefined;
  /** False when the process has already exited (Node swallows ESRCH). */
  kill(signal: NodeJS.Signals): boolean;
}

/** Starts relaying; the returned function removes every handler it added. */
export function forwardSignals(launcher: SignalTarget, logger: Logger): () => void {
  const relay = (signal: NodeJS.Signals): void => {
    const pid = launcher.pid;
    if (pid === undefined) return;
    if (TERMINAL_KEY_SIGNALS.has(signal) && sharesTerminalForeground(pid)) {
      logger.debug(
        { signal, pid },
        `${signal} not relayed: the terminal already sent it to the launcher's process group`,
      );
      return;
    }
    if (launcher.kill(signal)) {
      logger.info({ signal, pid }, `relayed ${signal} to the launcher (pid ${pid})`);
    } else {
      // tini: a child already gone (ESRCH) is expected at the end of a job, not an error.
      logger.debug({ signal, pid }, `${signal} not relayed: the launcher (pid ${pid}) has exited`);
    }
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, relay);
  return () => {
    for (const signal of FORWARDED_SIGNALS) process.off(signal, relay);
  };
}
