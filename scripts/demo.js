#!/usr/bin/env node
/**
 * `npm run demo` (root): the same two-node Gloo job without and with
 * nccl-run, on the namespace lab of test/lab/two-node.ts, and the
 * comparison. The lab is removed at the end, on failure, and on Ctrl-C.
 *
 *   node scripts/demo.js [--mb N]     (dist/ built; npm run demo builds it)
 */
import { parseArgs } from 'node:util';
import { tsImport } from 'tsx/esm/api';

const say = (line = '') => process.stdout.write(`${line}\n`);

async function main() {
  const { values } = parseArgs({ options: { mb: { type: 'string', default: '16' } } });
  const mb = Number(values.mb);
  if (!(mb > 0))
    throw new Error(`--mb: expected a positive number of megabytes, got "${values.mb}"`);

  const [twoNode, torchJob] = await Promise.all([
    tsImport('../test/lab/two-node.ts', import.meta.url),
    tsImport('../test/lab/torch-job.ts', import.meta.url),
  ]);
  const unavailable = torchJob.torchUnavailable('1.13');
  if (unavailable !== null) throw new Error(`the demo cannot run here: ${unavailable}`);

  say('Setting up two nodes in network namespaces...');
  const lab = await twoNode.TwoNodeLab.create('demo');
  const removeHandlers = twoNode.cleanupOnSignal(lab);
  try {
    describeLab(lab, twoNode.MANAGEMENT_RATE_MBIT);
    const job = (launcher, port, iters) => ({
      torch: '1.13',
      launcher,
      rendezvous: 'static',
      port,
      scriptArgs: ['--mb', String(mb), '--iters', String(iters)],
      ncclRunArgs: ['--log-format', 'json', '--verify-timeout', '60s'],
      timeoutMs: 180_000,
    });

    say(`\n1. torchrun alone, on both nodes (a ${mb} MB Gloo all-reduce):`);
    say(`   ${shown(torchJob.nodeCommand(lab, 'A', job('torchrun', 29700, 1)))}`);
    const untuned = await finished(torchJob.runJob(lab, job('torchrun', 29700, 1)), 'torchrun');
    say(`   -> ${untuned.report.mbPerSecond.toFixed(1)} MB/s, job took ${seconds(untuned)}`);

    say('\n2. The same argv behind nccl-run, on both nodes:');
    say(`   ${shown(torchJob.nodeCommand(lab, 'A', job('nccl-run', 29710, 5)))}`);
    const tuned = await finished(torchJob.runJob(lab, job('nccl-run', 29710, 5)), 'nccl-run');
    for (const node of ['A', 'B']) say(`   node ${node}: ${summaryLine(tuned.output[node])}`);
    say(`   -> ${tuned.report.mbPerSecond.toFixed(1)} MB/s, job took ${seconds(tuned)}`);

    const factor = tuned.report.mbPerSecond / untuned.report.mbPerSecond;
    say('\nComparison');
    say(`   torchrun alone   ${untuned.report.mbPerSecond.toFixed(1).padStart(8)} MB/s`);
    say(
      `   through nccl-run ${tuned.report.mbPerSecond.toFixed(1).padStart(8)} MB/s  (${factor.toFixed(0)}x)`,
    );
  } finally {
    removeHandlers();
    await lab.cleanup();
    say('\nLab removed.');
  }
}

function describeLab(lab, rateMbit) {
  say(
    `   node A (${lab.a.hostname}): data ${lab.a.dataIface} ${lab.a.dataAddress}, management eth0 ${lab.a.mgmtAddress}, docker0`,
  );
  say(
    `   node B (${lab.b.hostname}): data ${lab.b.dataIface} ${lab.b.dataAddress}, management eth0 ${lab.b.mgmtAddress}, docker0`,
  );
  say(`   The management link is limited to ${rateMbit} Mbit/s, and each hostname resolves to it.`);
}

/** The command as a user would type it, with the lab's full paths shortened. */
function shown([command, args]) {
  const words = [command, ...args].map((word) =>
    word.replace(/^.*\/bin\/nccl-run$/, 'nccl-run').replace(/^.*\/(allreduce\.py)$/, '$1'),
  );
  return words.join(' ');
}

/** nccl-run's launch summary ("using enp65s0 198.18.10.2 (subnet: ...)"), from its JSON log. */
function summaryLine(output) {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const record = JSON.parse(line);
      if (typeof record.msg === 'string' && record.msg.startsWith('using ')) return record.msg;
    } catch {
      // a worker's JSON-looking line, not a log record
    }
  }
  return '(no launch summary in its log)';
}

async function finished(resultPromise, what) {
  const result = await resultPromise;
  if (result.exitCodes.A !== 0 || result.exitCodes.B !== 0 || result.report === null) {
    const tail = `${result.output.A}\n${result.output.B}`.trim().split('\n').slice(-5).join('\n');
    throw new Error(`${what}: exited A=${result.exitCodes.A} B=${result.exitCodes.B}\n${tail}`);
  }
  return result;
}

const seconds = (result) => `${(result.wallMs / 1000).toFixed(1)} s`;

main().catch((error) => {
  console.error(`demo: ${error.message}`);
  process.exitCode = 1;
});
