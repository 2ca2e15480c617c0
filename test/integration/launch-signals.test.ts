/**
 * SPEC "Launch" with nccl-run as a real process: each relayed signal reaches
 * the launcher exactly once, a Ctrl-C typed in a terminal reaches it once
 * (from the kernel, not again from nccl-run), and nccl-run outlives a
 * launcher that ignores SIGTERM. nccl-run here is launch() in a process of
 * its own (test/fixtures/launch-driver.ts); launch-cli.test.ts repeats the
 * key cases through bin/nccl-run.js.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { FORWARDED_SIGNALS } from '../../src/launch/forward-signals.js';
import { fixture, isReady, reportPath, waitForReport } from '../fixtures/fixture-report.js';

const EXIT_CODE = 7;

/** nccl-run (launch() in its own process) running a fixture launcher. */
function ncclRun(launcher: string): string[] {
  return [process.execPath, '--import', 'tsx', fixture('launch-driver.ts'), fixture(launcher)];
}

function fixtureEnv(report: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FIXTURE_REPORT: report,
    FIXTURE_HOLD: '1',
    FIXTURE_EXIT_CODE: String(EXIT_CODE),
  };
}

/** Started in a session of its own: no controlling terminal, as under Slurm or Kubernetes. */
function startDetached(command: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const [file, ...args] = command as [string, ...string[]];
  return spawn(file, args, { env, detached: true, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Started by `script`, on a pseudo-terminal whose keys the test types into `stdin`. */
function startOnTerminal(command: string[], env: NodeJS.ProcessEnv): ChildProcess {
  // `exec` so that nccl-run itself is the terminal's foreground process, as in an interactive shell.
  return spawn('script', ['-qfec', `exec ${command.join(' ')}`, '/dev/null'], {
    env,
    stdio: ['pipe', 'ignore', 'inherit'],
  });
}

async function exitStatus(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

/**
 * Waits until `signal` has arrived and no duplicate of it can still be on its
 * way, then lets the holding fixture exit. nccl-run relays in the order it
 * receives, and a process takes pending signals lowest number first, so once
 * a marker relayed after `signal` has arrived, a second `signal` would have
 * too. The final report should hold exactly [signal, marker].
 */
async function settleAndRelease(
  nccl: ChildProcess,
  ncclPid: number,
  report: string,
  signal: string,
) {
  await waitForReport(report, (r) => r.signals.includes(signal));
  const marker = signal === 'SIGUSR2' ? 'SIGUSR1' : 'SIGUSR2';
  process.kill(ncclPid, marker);
  const held = await waitForReport(report, (r) => r.signals.includes(marker));
  process.kill(held.pid, 'SIGALRM');
  const status = await exitStatus(nccl);
  return { status, marker, final: await waitForReport(report, () => true) };
}

describe('launch: signals sent to nccl-run (kill(1), no terminal)', () => {
  it.each(FORWARDED_SIGNALS)('relays %s to the launcher exactly once', async (signal) => {
    const report = reportPath();
    const nccl = startDetached(ncclRun('report-launcher.js'), fixtureEnv(report));
    await waitForReport(report, isReady);
    process.kill(nccl.pid as number, signal);
    const { status, marker, final } = await settleAndRelease(
      nccl,
      nccl.pid as number,
      report,
      signal,
    );
    expect(final.signals).toEqual([signal, marker]);
    expect(status).toBe(EXIT_CODE);
  });

  it('keeps waiting for a launcher that ignores SIGTERM, and relays the next one too', async () => {
    const report = reportPath();
    const nccl = startDetached(ncclRun('ignore-sigterm.js'), fixtureEnv(report));
    await waitForReport(report, isReady);
    process.kill(nccl.pid as number, 'SIGTERM');
    await waitForReport(report, (r) => r.signals.length === 1);
    expect(nccl.exitCode).toBeNull();
    // Only a nccl-run still alive and relaying can deliver the second SIGTERM that ends the fixture.
    process.kill(nccl.pid as number, 'SIGTERM');
    expect(await exitStatus(nccl)).toBe(EXIT_CODE);
    expect((await waitForReport(report, () => true)).signals).toEqual(['SIGTERM', 'SIGTERM']);
  });
});

describe('launch: keys typed in a terminal (pseudo-terminal from script(1))', () => {
  it.each([
    ['Ctrl-C', '\x03', 'SIGINT'],
    ['Ctrl-\\', '\x1c', 'SIGQUIT'],
  ])('%s reaches the launcher exactly once', async (_key, keystroke, signal) => {
    const report = reportPath();
    const terminal = startOnTerminal(ncclRun('report-launcher.js'), fixtureEnv(report));
    const ready = await waitForReport(report, isReady);
    terminal.stdin?.write(keystroke);
    const { status, marker, final } = await settleAndRelease(terminal, ready.ppid, report, signal);
    expect(final.signals).toEqual([signal, marker]);
    expect(status).toBe(EXIT_CODE);
  });

  it('still relays a kill(1) of nccl-run that no key can send (SIGTERM)', async () => {
    const report = reportPath();
    const terminal = startOnTerminal(ncclRun('report-launcher.js'), fixtureEnv(report));
    const ready = await waitForReport(report, isReady);
    process.kill(ready.ppid, 'SIGTERM');
    const { status, marker, final } = await settleAndRelease(
      terminal,
      ready.ppid,
      report,
      'SIGTERM',
    );
    expect(final.signals).toEqual(['SIGTERM', marker]);
    expect(status).toBe(EXIT_CODE);
  });
});
