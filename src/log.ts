/**
 * Logs go to stderr only (SPEC "Outputs"): stdout belongs to torchrun and to
 * explain/env. Synchronous writes, so nothing is lost when main() returns.
 *
 * pino is made at the first line the level lets through, not before: its
 * require alone loads worker_threads (thread-stream, for transports nccl-run
 * never uses) and costs a run that logs nothing (`--log-level silent`,
 * explain, env) about a tenth of its start-up. The level test is pino's own
 * comparison over its default levels, so the logger says the same before
 * pino exists.
 */
import { createRequire } from 'node:module';
import type { LogFn, Logger as PinoLogger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { Options } from './options/option-table.js';

/** What nccl-run logs with; a pino logger is one. */
export type Logger = Pick<PinoLogger, 'debug' | 'info' | 'warn' | 'error' | 'isLevelEnabled'>;

type Level = Options['logLevel'];

/** pino 9's DEFAULT_LEVELS (lib/constants.js); 'silent' is Infinity there, above them all. */
const LEVEL_VALUES: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};

export function createLogger(level: Level, format: Options['logFormat']): Logger {
  let made: PinoLogger | undefined;
  // pino's isLevelEnabled: a known level at or above the logger's (levels.js).
  const isLevelEnabled = (asked: string): boolean =>
    asked !== 'silent' &&
    LEVEL_VALUES[asked] !== undefined &&
    (LEVEL_VALUES[asked] as number) >= (LEVEL_VALUES[level] as number);
  const method = (name: 'debug' | 'info' | 'warn' | 'error'): LogFn =>
    ((...args: Parameters<LogFn>) => {
      if (!isLevelEnabled(name)) return;
      made ??= makePino(level, format);
      made[name](...args);
    }) as LogFn;
  return {
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    isLevelEnabled,
  };
}

function makePino(level: Level, format: Options['logFormat']): PinoLogger {
  const { destination, pino } = load().pino();
  const options = { name: 'nccl-run', level, base: undefined };
  if (format === 'json') return pino(options, destination({ fd: 2, sync: true }));
  return pino(
    options,
    load().pretty()({
      destination: 2,
      sync: true,
      // One line per event, as torchrun's and NCCL's own lines beside it in a
      // Slurm .out file or `kubectl logs`; an event's fields stay on its line.
      singleLine: true,
      // Colour is for a person at a terminal; a file or a pipe gets plain
      // text (no-color.org's NO_COLOR turns it off there too).
      colorize: process.stderr.isTTY === true && !process.env.NO_COLOR,
      ignore: 'pid,hostname',
      translateTime: 'HH:MM:ss',
    }),
  );
}

/**
 * The modules, at the moment a line needs them, so synchronously: both builds
 * bundle a direct require() (esbuild), and vitest's module wrapper has one;
 * the sources run as plain ESM (tsx, npm run dev) have none, and use Node's.
 */
function load(): { pino: () => typeof import('pino'); pretty: () => typeof PinoPretty } {
  if (typeof require === 'function') {
    return { pino: () => require('pino'), pretty: () => require('pino-pretty') };
  }
  const nodeRequire = createRequire(import.meta.url);
  return { pino: () => nodeRequire('pino'), pretty: () => nodeRequire('pino-pretty') };
}
