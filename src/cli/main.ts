/**
 * The entry point (changesets' shape, STYLE.md §4): split, parse, settle,
 * plan, then the command; one catch turns typed errors into the exit table of
 * SPEC.md. Only entry.ts turns the returned status into process exit.
 */
import { formatEnv, shellQuote } from '../env/format-env.js';
import { EXIT, NcclRunError, UsageError } from '../errors.js';
import { parseTorchrunArgs } from '../job/torchrun-args.js';
import { findLauncher } from '../launch/find-launcher.js';
import { type HandoverTarget, handOver } from '../launch/hand-over.js';
import { createLogger, type Logger } from '../log.js';
import type { Options } from '../options/option-table.js';
import { settleOptions } from '../options/settle-options.js';
import { learnedBeforeFailure, makePlan, type Plan } from '../plan.js';
import { VerificationFailedError } from '../verify/failure.js';
import type { VerifyReport } from '../verify/verify.js';
import { packageVersion } from '../version.js';
import { checkTorchrunPart } from './misplaced-options.js';
import {
  checkJson,
  explainFailureJson,
  explainFailureText,
  explainJson,
  explainText,
  launchSummary,
} from './render.js';
import { splitArgv } from './split-argv.js';

export async function main(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  handover: HandoverTarget | null = null,
): Promise<number> {
  let logger: Logger | null = null;
  let logFormat: Options['logFormat'] = 'pretty';
  try {
    if (argv[0] === '--get-yargs-completions') {
      const { buildParser } = await import('./parser.js');
      await buildParser().parseAsync([...argv]);
      return 0;
    }
    const split = splitArgv(argv);
    const { flags } = split;
    if (flags.help === true) {
      const { buildParser, EPILOGUE, USAGE } = await import('./parser.js');
      process.stdout.write(`${USAGE}\n\n${await buildParser().getHelp()}\n\n${EPILOGUE}\n`);
      return 0;
    }
    if (flags.version === true) {
      process.stdout.write(`${packageVersion()}\n`);
      return 0;
    }
    if (split.command === 'completion') {
      const { buildParser } = await import('./parser.js');
      buildParser().showCompletionScript();
      return 0;
    }
    if (split.command === 'init') {
      const [extra] = [...split.commandArgs.slice(1), ...split.torchrun];
      if (extra !== undefined) {
        throw new UsageError(
          `init: unexpected '${extra}'; init takes TEMPLATE [--out PATH] [--force]`,
        );
      }
      const { runInit } = await import('../templates/init.js');
      return await runInit(
        {
          template: split.commandArgs[0],
          out: (flags.out as string | undefined) ?? null,
          force: flags.force === true,
        },
        process.stdout,
      );
    }

    checkTorchrunPart(split);
    const settled = settleOptions(flags, env, process.cwd(), {
      isTty: process.stderr.isTTY === true,
    });
    const { options } = settled;
    logFormat = options.logFormat;
    logger = await createLogger(options.logLevel, logFormat);
    // Before the plan, so that a launcher that cannot start costs no wait.
    const launcherFile =
      split.command === 'run' && !options.dryRun
        ? findLauncher(options.torchrun[0], env.PATH ?? settled.envFileExtras.PATH)
        : '';
    /** Hands the launch over with this environment; the shell exports what differs from its own. */
    const launch = (childEnv: Record<string, string>) => {
      handOver(
        {
          file: launcherFile,
          launcher: options.torchrun,
          ownTokens: argv.length - split.torchrun.length,
          torchrunArgv: split.torchrun,
          exports: Object.fromEntries(
            Object.entries(childEnv).filter(([name, value]) => env[name] !== value),
          ),
          env: childEnv,
        },
        handover,
      );
      return 0;
    };
    // SPEC: torchrun prints its help and exits; there is no job to resolve or verify.
    if (launcherFile !== '' && parseTorchrunArgs(split.torchrun).help) {
      return launch({ ...settled.envFileExtras, ...(env as Record<string, string>) });
    }
    // Every command plans from the same facts (SPEC "The stack"); only what it prints differs.
    const plan = await makePlan(split.torchrun, settled, env).catch((error: unknown) => {
      const learned = learnedBeforeFailure(error);
      if (split.command !== 'explain' || learned === undefined || !(error instanceof NcclRunError))
        throw error;
      // SPEC "Outputs": explain prints what it learned, with the error, and exits with its status.
      process.stdout.write(
        options.json
          ? `${JSON.stringify(explainFailureJson(learned, error), null, 2)}\n`
          : explainFailureText(learned, error),
      );
      // Where stdout goes to a file, the terminal still gets the one line; the details are in the report.
      return reportFailure(error, logger, logFormat, { details: false });
    });
    if (typeof plan === 'number') return plan;
    for (const warning of plan.variables.warnings) logger.warn(warning);
    // The whole decision at debug level, on every command: what explain prints, run logs.
    logger.debug(
      { decision: plan.decision, set: plan.variables.set, kept: plan.variables.kept },
      'decided',
    );

    switch (split.command) {
      case 'explain':
        process.stdout.write(
          options.json ? `${JSON.stringify(explainJson(plan), null, 2)}\n` : explainText(plan),
        );
        return 0;
      case 'env':
        process.stdout.write(formatEnv(plan.variables.set, options.json ? 'json' : options.format));
        return 0;
      case 'check': {
        logger.info(launchSummary(plan));
        // SPEC --require-transport: the commands that verify check it, before any wait.
        if (plan.transport.unmet !== null) throw plan.transport.unmet;
        try {
          const report = await runVerify(plan, options, logger);
          if (options.json)
            process.stdout.write(`${JSON.stringify(checkJson(plan, report), null, 2)}\n`);
          return 0;
        } catch (error) {
          // check --json reports every peer, the failing ones above all.
          if (options.json && error instanceof VerificationFailedError) {
            process.stdout.write(`${JSON.stringify(checkJson(plan, error.report), null, 2)}\n`);
          }
          throw error;
        }
      }
      case 'run': {
        logger.info(launchSummary(plan));
        if (plan.transport.unmet !== null) throw plan.transport.unmet;
        await runVerify(plan, options, logger);
        if (options.dryRun) {
          process.stdout.write(formatEnv(plan.variables.set, 'shell'));
          process.stdout.write(`${plan.command.map(shellQuote).join(' ')}\n`);
          return 0;
        }
        return launch(plan.childEnv);
      }
    }
  } catch (error) {
    return reportFailure(error, logger, logFormat);
  }
}

async function runVerify(
  plan: Plan,
  options: Options,
  logger: Logger,
): Promise<VerifyReport | null> {
  if (options.verify === 'none') return null;
  // Loaded on demand, like everything that only some invocations need (start-up time).
  const { verify } = await import('../verify/verify.js');
  const report = await verify({
    level: options.verify,
    decision: plan.decision,
    job: plan.job,
    facts: plan.facts,
    routesToMaster: plan.routesToMaster,
    timeoutMs: options.verifyTimeout,
    // SPEC --peers: it restricts the mesh; Slurm's node list only names who is missing.
    peers: options.peers !== null ? plan.peers : [],
    probePort: options.probePort,
    logger,
    masterAddresses: plan.master?.addresses ?? [],
    masterFamily: plan.context.family,
    jobId: plan.job.jobId,
    nodeName: plan.job.nodeName ?? plan.facts.hostname,
    minBandwidthMbps: options.minBandwidth,
  }).catch((error: unknown) => {
    // The warnings often say why it failed (a route through another interface): log them first.
    if (error instanceof VerificationFailedError) {
      for (const warning of error.report.warnings) logger.warn(warning);
    }
    throw error;
  });
  for (const warning of report.warnings) logger.warn(warning);
  const reached = report.results.filter((result) => result.ok).length;
  logger.info(
    `verify ${report.level}: passed over ${report.interface} (${report.localAddress}), ${reached} check(s) in ${report.elapsedMs} ms`,
  );
  return report;
}

/**
 * One line on stderr, the exit status from the error's class. Details (an
 * interface table, a trace) go into the JSON record, or as plain lines under
 * a human-readable message.
 */
function reportFailure(
  error: unknown,
  logger: Logger | null,
  logFormat: Options['logFormat'],
  { details: withDetails = true } = {},
): number {
  if (error instanceof NcclRunError) {
    const details = withDetails && error.details.length > 0 ? error.details : undefined;
    // Even --log-level silent gets the one line: a failure never passes unsaid.
    const logged = logger?.isLevelEnabled('error') ? logger : null;
    if (logged && logFormat === 'json') {
      logged.error({ details }, error.message);
      return error.exitCode;
    }
    if (logged) logged.error(error.message);
    else process.stderr.write(`nccl-run: ${error.message}\n`);
    for (const line of details ?? []) process.stderr.write(`  ${line}\n`);
    return error.exitCode;
  }
  process.stderr.write(
    `nccl-run: internal error (please report it): ${(error as Error)?.stack ?? String(error)}\n`,
  );
  return EXIT.internal;
}
