/**
 * The entry point (changesets' shape, STYLE.md §4): split argv, dispatch to
 * the command's module (commands/), and turn a typed error into the exit
 * table of SPEC.md in one catch. Only entry.ts turns the returned status
 * into the process's exit.
 */
import type { HandoverTarget } from '../launch/hand-over.js';
import { auditCommand } from './commands/audit.js';
import { checkCommand } from './commands/check.js';
import { envCommand } from './commands/env.js';
import { explainCommand } from './commands/explain.js';
import { completionCommand, helpCommand, versionCommand } from './commands/help.js';
import { initCommand } from './commands/init.js';
import { runCommand } from './commands/run.js';
import { type JobContext, startJob } from './job-context.js';
import { checkTorchrunPart } from './misplaced-options.js';
import { type FailureLog, reportFailure } from './report-failure.js';
import { splitArgv } from './split-argv.js';

const JOB_COMMANDS: Record<
  'run' | 'explain' | 'env' | 'check',
  (job: JobContext) => Promise<number>
> = { run: runCommand, explain: explainCommand, env: envCommand, check: checkCommand };

export async function main(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  handover: HandoverTarget | null = null,
): Promise<number> {
  const failures: FailureLog = { logger: null, format: 'text' };
  try {
    if (argv[0] === '--get-yargs-completions') return await completionCommand(argv);
    const split = splitArgv(argv);
    if (split.flags.help === true) return await helpCommand();
    if (split.flags.version === true) return versionCommand();
    if (split.command === 'completion') return await completionCommand([]);
    if (split.command === 'init') return await initCommand(split);
    if (split.command === 'audit') return await auditCommand(split);
    const torchrunArgs = checkTorchrunPart(split);
    const job = startJob({ argv, split, torchrunArgs, env, handover }, failures);
    return await JOB_COMMANDS[split.command](job);
  } catch (error) {
    return reportFailure(error, failures);
  }
}
