/**
 * launch() called directly, against real fixture launchers: argv and
 * environment arrive unchanged, every way a launcher ends maps to SPEC "Exit
 * status", and nothing is left behind. Signals are in launch-signals.test.ts,
 * where nccl-run is a process of its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { LauncherError } from '../../src/errors.js';
import { FORWARDED_SIGNALS, forwardSignals } from '../../src/launch/forward-signals.js';
import { launch } from '../../src/launch/launch.js';
import { fixture, readReport, removeReports, reportPath } from '../fixtures/fixture-report.js';

afterAll(removeReports);

/** A pino logger whose lines the test can read. */
function capturingLogger() {
  const lines: Array<{ level: number; msg: string; signal?: string }> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

const quiet = pino({ level: 'silent' });

/** The fixture's environment: only what it needs, so the replacement can be checked exactly. */
function fixtureEnv(report: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, FIXTURE_REPORT: report, ...extra };
}

async function launchError(command: string[], env: NodeJS.ProcessEnv): Promise<LauncherError> {
  const error = await launch(command, env, quiet).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(LauncherError);
  return error as LauncherError;
}

describe('launch: what the launcher receives', () => {
  it('passes every argument byte for byte, with no shell in between', async () => {
    const report = reportPath();
    const marker = join(dirname(report), 'shell-ran');
    const args = [
      'train.py',
      'two words',
      '"double"',
      "'single'",
      `$(touch ${marker})`,
      `\`touch ${marker}\``,
      'a;b && c | d',
      '',
      ' ',
      'naïve 日本語 ✓',
      '--iface',
      'eth9',
      '*',
      'back\\slash',
      'new\nline',
      '$HOME',
    ];
    await expect(
      launch([fixture('report-launcher.js'), ...args], fixtureEnv(report), quiet),
    ).resolves.toBe(0);
    expect(readReport(report)?.argv).toEqual(args);
    expect(existsSync(marker)).toBe(false);
  });

  it('gives the launcher exactly the environment it was handed, nothing of its own', async () => {
    const report = reportPath();
    const env = fixtureEnv(report, { NCCL_SOCKET_IFNAME: '=lo', EMPTY: '', SPACED: 'a b' });
    await launch([fixture('report-launcher.js')], env, quiet);
    expect(readReport(report)?.env).toEqual(env);
    // This process's own variables (HOME at least) must not leak through.
    expect(process.env.HOME).toBeDefined();
    expect(readReport(report)?.env.HOME).toBeUndefined();
  });
});

describe('launch: exit status (SPEC "Exit status")', () => {
  it.each([0, 1, 2, 42, 255])('passes exit code %i through', async (code) => {
    const report = reportPath();
    const env = fixtureEnv(report, { FIXTURE_EXIT_CODE: String(code) });
    await expect(launch([fixture('report-launcher.js')], env, quiet)).resolves.toBe(code);
  });

  it.each([
    ['SIGKILL', 137],
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ])('gives 128 + N for a launcher killed by %s', async (signal, status) => {
    const env = { PATH: process.env.PATH, FIXTURE_SIGNAL: signal };
    await expect(launch([fixture('self-signal.js')], env, quiet)).resolves.toBe(status);
  });

  it('throws LauncherError 127 naming the command and the PATH searched', async () => {
    const env = { PATH: '/nonexistent-a:/nonexistent-b' };
    const error = await launchError(['nccl-run-no-such-launcher', '--nnodes=2'], env);
    expect(error.exitCode).toBe(127);
    expect(error.message).toContain('"nccl-run-no-such-launcher"');
    expect(error.message).toContain('PATH=/nonexistent-a:/nonexistent-b');
  });

  it('throws LauncherError 127 for a path that does not exist', async () => {
    const error = await launchError(['/nonexistent/bin/torchrun'], { PATH: process.env.PATH });
    expect(error.exitCode).toBe(127);
    expect(error.message).toContain('"/nonexistent/bin/torchrun" not found (no such file)');
  });

  it('throws LauncherError 126 for a file that is not executable', async () => {
    const error = await launchError([fixture('not-executable.js')], { PATH: process.env.PATH });
    expect(error.exitCode).toBe(126);
    expect(error.message).toContain(fixture('not-executable.js'));
    expect(error.message).toContain('not executable');
  });

  it('throws LauncherError 126 for a non-executable file found on the PATH, naming where', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'ncr-launch-bin-'));
    copyFileSync(fixture('not-executable.js'), join(bin, 'torchrun'));
    chmodSync(join(bin, 'torchrun'), 0o644);
    try {
      const error = await launchError(['torchrun'], { PATH: bin });
      expect(error.exitCode).toBe(126);
      expect(error.message).toContain(join(bin, 'torchrun'));
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('throws LauncherError 126 naming the missing #! interpreter of a moved virtualenv', async () => {
    const error = await launchError([fixture('moved-venv-launcher')], { PATH: process.env.PATH });
    expect(error.exitCode).toBe(126);
    expect(error.message).toContain('"/nonexistent/venv/bin/python3"');
  });

  it('throws LauncherError 127 for an empty command', async () => {
    const error = await launchError([], { PATH: process.env.PATH });
    expect(error.exitCode).toBe(127);
  });
});

describe('launch: signal handlers', () => {
  const listenerCounts = () => FORWARDED_SIGNALS.map((signal) => process.listenerCount(signal));

  it('removes its handlers when the launcher ends, and when it cannot start', async () => {
    const before = listenerCounts();
    await launch([fixture('report-launcher.js')], fixtureEnv(reportPath()), quiet);
    expect(listenerCounts()).toEqual(before);
    await launchError(['nccl-run-no-such-launcher'], { PATH: '/nonexistent' });
    expect(listenerCounts()).toEqual(before);
  });

  it('logs a signal for a launcher already gone at debug level, and does not throw', async () => {
    const { logger, lines } = capturingLogger();
    const gone: ChildProcess = spawn(process.execPath, ['-e', '0']);
    await once(gone, 'exit');
    const stop = forwardSignals(gone, logger);
    try {
      const relayed = new Promise((resolve) => process.once('SIGUSR2', resolve));
      process.kill(process.pid, 'SIGUSR2');
      await relayed;
    } finally {
      stop();
    }
    expect(lines).toEqual([
      expect.objectContaining({
        level: 20,
        signal: 'SIGUSR2',
        msg: expect.stringContaining('has exited'),
      }),
    ]);
  });
});
