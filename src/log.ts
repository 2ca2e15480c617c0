/**
 * Logs go to stderr only (SPEC "Outputs"): stdout belongs to torchrun and to
 * explain/env. Synchronous writes, so nothing is lost when main() returns.
 */
import { destination, type Logger, pino } from 'pino';
import type { Options } from './options/option-table.js';

export type { Logger };

export async function createLogger(
  level: Options['logLevel'],
  format: Options['logFormat'],
): Promise<Logger> {
  const options = { name: 'nccl-run', level, base: undefined };
  if (format === 'json') return pino(options, destination({ fd: 2, sync: true }));
  // pino-pretty is loaded only for a terminal: it is most of pino's start-up cost.
  const { default: pretty } = await import('pino-pretty');
  return pino(
    options,
    pretty({ destination: 2, sync: true, ignore: 'pid,hostname,name', translateTime: 'HH:MM:ss' }),
  );
}
