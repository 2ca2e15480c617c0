/** `nccl-run audit [--json] [PATH...|-]`: NCCL's own lines, read (src/audit/). */
import * as z from 'zod/mini';
import { UsageError } from '../../errors.js';
import { OPTIONS } from '../../options/option-table.js';
import type { SplitArgv } from '../split-argv.js';

export async function auditCommand({ commandArgs, torchrun, flags }: SplitArgv): Promise<number> {
  const [extra] = torchrun;
  if (extra !== undefined) {
    throw new UsageError(
      `audit: unknown option '${extra}'; audit takes [--json] [PATH...|-] (a path that begins with '-' goes after --)`,
    );
  }
  // The one boolean schema every option uses (`--json=no` is off).
  const json = z.safeParse(OPTIONS.json.schema, flags.json ?? false);
  if (!json.success) {
    throw new UsageError(
      `--json: bad value '${String(flags.json)}': ${json.error.issues[0]?.message}`,
    );
  }
  const { readSources } = await import('../../audit/read-sources.js');
  const { auditOutput, auditSources } = await import('../../audit/audit.js');
  const report = auditSources(await readSources(commandArgs));
  const { text, exitCode } = auditOutput(report, json.data);
  process.stdout.write(text);
  return exitCode;
}
