/**
 * `--verify collective` (SPEC "Verification"), after peers has passed: the
 * miniature of the job (run-miniature.ts) with the job's own launcher,
 * torchrun options, interpreter, torch and NCCL; what it measured and what
 * NCCL logged, judged (verdict.ts, nccl-check.ts); the last barrier
 * (barrier.ts); the private folder removed whatever happened. Returns the
 * report; a failed verdict is the caller's to throw (75), on every node
 * alike, since every node judges the same gathered figures.
 *
 * The miniature's rendezvous is the job's own port: the one the job's
 * firewall opens, taken by nothing else of this job at this moment. The
 * peers round's probe service has closed (the master's once every node had
 * its roster), torch's store binds with SO_REUSEADDR, and the last barrier
 * keeps the real job off the port until the miniature's store has gone.
 * A port beside it could belong to another job (peers/meeting-point.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import type { Options } from '../options/option-table.js';
import type { Plan } from '../plan/plan.js';
import { deadlineIn, formatSeconds } from '../reach/clock.js';
import { parseTorchrunArgs } from '../torch/torchrun-args.js';
import { torchrunTable } from '../torch/torchrun-table.js';
import { type BarrierOutcome, lastBarrier } from './barrier.js';
import { miniatureArgv } from './miniature-argv.js';
import { lastWarnings, ncclFindings } from './nccl-check.js';
import { type MiniatureOutcome, readOutcome } from './read-outcome.js';
import type { CollectiveReport } from './report.js';
import { type MiniatureRun, miniatureEnv, runMiniature, writeProgram } from './run-miniature.js';
import { type CollectiveFinding, collectiveFigures, figureFindings } from './verdict.js';

/** After a collective that did not finish, how long the barrier waits for the others to say so too. */
const BARRIER_AFTER_FAILURE_MS = 15_000;

export interface CollectiveInput {
  plan: Plan;
  options: Pick<Options, 'verifyTimeout' | 'minBusBandwidth' | 'torchrun'>;
  /** The launcher file (launch/find-launcher.ts). */
  launcherFile: string;
  /** --peers, as the peers round was restricted. */
  peers: readonly string[];
  logger: Logger;
}

export async function verifyCollective(input: CollectiveInput): Promise<CollectiveReport> {
  const { plan, options, logger } = input;
  const began = performance.now();
  const nodeName = plan.job.nodeName ?? plan.facts.hostname;
  const dir = mkdtempSync(join(tmpdir(), 'nccl-run-collective-'));
  let run: MiniatureRun;
  let outcome: MiniatureOutcome;
  let readS: number;
  try {
    const program = writeProgram(dir);
    const torchrunArgv = plan.command.slice(options.torchrun.length);
    const table = torchrunTable(plan.stack.torch.version, plan.stack.torch.entry);
    const argv = miniatureArgv(torchrunArgv, parseTorchrunArgs(torchrunArgv, table), table, [
      program,
      ...['--out', dir, '--node', nodeName, '--address', plan.decision.address],
      ...['--timeout', String(Math.max(1, Math.round(options.verifyTimeout / 1_000)))],
    ]);
    logger.info(
      `verify collective: the job's launcher with its own options and nccl-run's program, for at most ${formatSeconds(options.verifyTimeout)}`,
    );
    logger.debug({ argv: [...options.torchrun, ...argv] }, 'miniature');
    run = await runMiniature({
      file: input.launcherFile,
      argv: [...options.torchrun.slice(1), ...argv],
      env: miniatureEnv(plan.childEnv, dir),
      dir,
      timeoutMs: options.verifyTimeout,
    });
    const reading = performance.now();
    outcome = readOutcome(dir);
    readS = (performance.now() - reading) / 1_000;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const findings = judge(run, outcome, input, nodeName);
  const failed = findings.some((finding) => finding.level === 'failure');
  const barrierBegan = performance.now();
  // A quieter logger: the round's lines were logged by the peers check already.
  const quiet: Logger = { ...logger, info: logger.debug.bind(logger) };
  const barrier = await lastBarrier(
    plan,
    input.peers,
    deadlineIn(
      failed ? Math.min(BARRIER_AFTER_FAILURE_MS, options.verifyTimeout) : options.verifyTimeout,
    ),
    quiet,
  );
  if (!barrier.ok) findings.push(barrierFinding(barrier, run));
  const result = outcome.result;
  const figures = result === null ? null : collectiveFigures(result);
  const phases = result?.phases ?? null;
  const programS =
    phases === null ? 0 : phases.importS + phases.initS + phases.allReduceS + phases.ringS;
  return {
    backend: result?.backend ?? null,
    torch: result?.torch ?? null,
    ranks: result?.ranks ?? null,
    busBandwidth: figures?.busBandwidth ?? [],
    links: figures?.links ?? [],
    medianLink: figures?.medianLink ?? null,
    nccl: outcome.nccl.map(({ evidence: _evidence, ...rank }) => rank),
    verdict: { ok: !findings.some((finding) => finding.level === 'failure'), findings },
    phases: {
      // What the launcher, its interpreter and torchrun's rendezvous took beside the program.
      launchS: phases === null ? null : Math.max(0, run.elapsedMs / 1_000 - programS),
      importS: phases?.importS ?? null,
      initS: phases?.initS ?? null,
      allReduceS: phases?.allReduceS ?? null,
      ringS: phases?.ringS ?? null,
      readS,
      barrierS: (performance.now() - barrierBegan) / 1_000,
      totalS: (performance.now() - began) / 1_000,
    },
  };
}

function judge(
  run: MiniatureRun,
  outcome: MiniatureOutcome,
  input: CollectiveInput,
  nodeName: string,
): CollectiveFinding[] {
  const { plan, options } = input;
  const warns = lastWarnings(outcome.nccl);
  const lastWarn = warns.length === 0 ? '' : `; NCCL's last WARN: ${warns.join('; ')}`;
  if (run.timedOut) {
    return [
      {
        level: 'failure',
        rule: 'timeout',
        message: `the collective did not complete within ${formatSeconds(options.verifyTimeout)} (--verify-timeout): on this node (${nodeName}) ${stagesText(outcome.stages)}${lastWarn}`,
        nodes: [nodeName],
      },
    ];
  }
  if (outcome.result === null) {
    const tail = lastLines(run.output, 3);
    return [
      {
        level: 'failure',
        rule: 'failed',
        message: `the collective's launcher exited with status ${run.status} on this node (${nodeName}) before the result: ${outcome.resultProblem ?? stagesText(outcome.stages)}${lastWarn}${tail === '' ? '' : `; its last lines: ${tail}`}`,
        nodes: [nodeName],
      },
    ];
  }
  return [
    ...figureFindings(
      collectiveFigures(outcome.result),
      // --min-bus-bandwidth is in Mbit/s (options/rate.ts); the figures in bytes per second.
      options.minBusBandwidth === null ? null : (options.minBusBandwidth * 1e6) / 8,
    ),
    ...ncclFindings(outcome.nccl, {
      interface: plan.nccl.pick?.interface ?? plan.decision.interface,
      node: nodeName,
      required: plan.transport.required,
    }),
  ];
}

/** Which local ranks reached which stage; none at all: torchrun's rendezvous never completed here. */
function stagesText(stages: ReadonlyMap<number, string>): string {
  if (stages.size === 0) {
    return "no rank started: torchrun's rendezvous did not complete (a node did not join it)";
  }
  const waiting: Record<string, string> = {
    import: 'importing torch',
    init: 'joining the group (init_process_group)',
    'all-reduce': 'in the all-reduce',
    ring: 'in the ring pass',
    done: 'done',
  };
  return [...stages]
    .sort(([a], [b]) => a - b)
    .map(([rank, stage]) => `rank ${rank} ${waiting[stage] ?? stage}`)
    .join(', ');
}

function barrierFinding(barrier: Extract<BarrierOutcome, { ok: false }>, run: MiniatureRun) {
  const counted =
    barrier.registered === null || barrier.expected === null
      ? ''
      : ` (${barrier.registered} of ${barrier.expected} nodes came)`;
  const names = barrier.missing.length === 0 ? 'a node' : barrier.missing.join(', ');
  return {
    level: 'failure' as const,
    rule: 'timeout' as const,
    message: `${names} did not reach the end of the collective${counted}${run.timedOut ? ', the node(s) the collective waited for' : ''}: ${barrier.why}`,
    nodes: barrier.missing,
  };
}

function lastLines(text: string, count: number): string {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(-count)
    .join(' | ');
}
