/**
 * SPEC "Launch" on the other path: the one-file build run by plain `node`
 * on a Node that has process.execve (22.15+) execs the launcher itself, no
 * shell in between. The same contract holds there (same pid, exit status,
 * every environment entry, signals once), but for bytes that are not UTF-8,
 * which Node decodes before nccl-run sees them: the shell entry and the
 * single executable keep those. The Node is the one the single executable
 * embeds (scripts/official-node.js, fetched by `npm run release`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { NODE_VERSION, officialNode } from '../../scripts/official-node.js';
import {
  fixture,
  isReady,
  readReport,
  removeReports,
  reportPath,
  waitForReport,
} from '../fixtures/fixture-report.js';
import { settleAndRelease } from '../fixtures/nccl-run-process.js';
import { tier } from '../lab/tier.js';

afterAll(removeReports);

const NODE = officialNode('x64');
const BUNDLE = fileURLToPath(new URL('../../dist/nccl-run.mjs', import.meta.url));
const unavailable = existsSync(BUNDLE) ? null : `${BUNDLE} is missing: run npm run build`;

/** nccl-run's one-file build under Node 22, launching the recording fixture. */
function start(
  report: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  job: string[] = [],
): ChildProcess {
  return spawn(
    NODE,
    [
      ...[
        '--',
        BUNDLE,
        '--log-level',
        'silent',
        ...args,
        '--torchrun',
        fixture('report-launcher.js'),
      ],
      ...[...job, 'train.py', 'two words', 'naïve'],
    ],
    {
      env: { ...process.env, FIXTURE_REPORT: report, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
}

tier(`launch through process.execve (Node ${NODE_VERSION}, plain node)`, unavailable, () => {
  it('the launcher is the process, with its argv, every entry of the environment and its exit status', async () => {
    const report = reportPath();
    const odd = { 'a-b': '1', 'BASH_FUNC_module%%': '() {  echo module\n}' };
    const nccl = start(report, ['--iface', 'lo', '--verify', 'none'], {
      ...odd,
      FIXTURE_EXIT_CODE: '42',
    });
    const [code] = await once(nccl, 'exit');
    expect(code).toBe(42);
    const seen = readReport(report);
    expect(seen?.pid).toBe(nccl.pid);
    expect(seen?.argv).toEqual(['train.py', 'two words', 'naïve']);
    expect(seen?.env).toMatchObject({
      ...odd,
      NCCL_SOCKET_IFNAME: '=lo',
      GLOO_SOCKET_IFNAME: 'lo',
    });
  });

  it('a SIGTERM after the exec arrives exactly once', async () => {
    const report = reportPath();
    const nccl = start(report, ['--iface', 'lo', '--verify', 'none'], {
      FIXTURE_HOLD: '1',
      FIXTURE_EXIT_CODE: '7',
    });
    const ready = await waitForReport(report, isReady, { writer: nccl });
    expect(ready.pid).toBe(nccl.pid);
    process.kill(ready.pid, 'SIGTERM');
    const { status, marker, final } = await settleAndRelease(nccl, ready.pid, report, 'SIGTERM');
    expect(final.signals).toEqual(['SIGTERM', marker]);
    expect(status).toBe(7);
  });

  it('a SIGTERM before the exec, while the pre-flight waits, ends it at once and nothing starts', async () => {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    server.close();
    const report = reportPath();
    const nccl = start(
      report,
      ['--iface', 'lo', '--verify', 'master', '--verify-timeout', '60s', '--log-level', 'info'],
      {},
      ['--nnodes=2', '--node-rank=1', '--master-addr=127.0.0.1', `--master-port=${port}`],
    );
    let stderr = '';
    await new Promise<void>((resolve) => {
      nccl.stderr?.on('data', (chunk) => {
        stderr += String(chunk);
        if (stderr.includes(' INFO (nccl-run): ')) resolve();
      });
    });
    nccl.kill('SIGTERM'); // Node itself: no handler, so its default action, at once
    const [, signal] = await once(nccl, 'exit');
    expect(signal).toBe('SIGTERM');
    // At once: the pre-flight, which would have waited out its 60 s, never got to its verdict.
    expect(stderr).not.toContain('verification failed');
    expect(readReport(report)).toBeUndefined();
  });
});
