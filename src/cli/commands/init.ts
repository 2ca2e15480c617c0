/** `nccl-run init TEMPLATE [--out PATH] [--force] [--port-range LOW-HIGH]`: init takes nothing else. */
import { UsageError } from '../../errors.js';
import type { SplitArgv } from '../split-argv.js';

export async function initCommand({ commandArgs, torchrun, flags }: SplitArgv): Promise<number> {
  const [extra] = [...commandArgs.slice(1), ...torchrun];
  if (extra !== undefined) {
    throw new UsageError(
      `init: unexpected '${extra}'; init takes TEMPLATE [--out PATH] [--force] [--port-range LOW-HIGH]`,
    );
  }
  const { runInit } = await import('../../templates/init.js');
  return await runInit(
    {
      template: commandArgs[0],
      out: (flags.out as string | undefined) ?? null,
      force: flags.force === true,
      portRange: (flags['port-range'] as string | undefined) ?? null,
    },
    process.stdout,
  );
}
