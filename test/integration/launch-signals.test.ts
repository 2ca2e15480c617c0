/**
 * SPEC "Launch" with nccl-run as a real process: each relayed signal reaches
 * the launcher exactly once, a Ctrl-C typed in a terminal reaches it once
 * (from the kernel, not again from nccl-run), and nccl-run outlives a
 * launcher that ignores SIGTERM. Each case runs twice: launch() alone in a
 * process of its own (test/fixtures/launch-driver.ts), and the real CLI,
 * bin/nccl-run.js, which needs `npm run build` first.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORWARDED_SIGNALS } from '../../src/launch/forward-signals.js';
import { isReady, removeReports, reportPath, waitForReport } from '../fixtures/fixture-report.js';
import {
  cliCommand,
  driverCommand,
  exitStatus,
  settleAndRelease,
  startDetached,
  startOnTerminal,
} from '../fixtures/nccl-run-process.js';

afterAll(removeReports);

const EXIT_CODE = 7;

function fixtureEnv(report: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FIXTURE_REPORT: report,
    FIXTURE_HOLD: '1',
    FIXTURE_EXIT_CODE: String(EXIT_CODE),
  };
}

const BUILT_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

describe.each([
  { as: 'launch() alone', ncclRun: driverCommand },
  { as: 'the nccl-run CLI', ncclRun: cliCommand },
])('launch, with nccl-run as $as', ({ as, ncclRun }) => {
  beforeAll(() => {
    if (as === 'the nccl-run CLI' && !existsSync(BUILT_CLI)) {
      throw new Error(`${BUILT_CLI} is missing: run npm run build first`);
    }
  });

  describe('signals sent to nccl-run (kill(1), no terminal)', () => {
    it.each(FORWARDED_SIGNALS)('relays %s to the launcher exactly once', async (signal) => {
      const report = reportPath();
      const nccl = startDetached(ncclRun('report-launcher.js'), fixtureEnv(report));
      await waitForReport(report, isReady, { writer: nccl });
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
      await waitForReport(report, isReady, { writer: nccl });
      process.kill(nccl.pid as number, 'SIGTERM');
      await waitForReport(report, (r) => r.signals.length === 1, {
        writer: nccl,
      });
      expect(nccl.exitCode).toBeNull();
      // Only a nccl-run still alive and relaying can deliver the second SIGTERM that ends the fixture.
      process.kill(nccl.pid as number, 'SIGTERM');
      expect(await exitStatus(nccl)).toBe(EXIT_CODE);
      expect((await waitForReport(report, () => true)).signals).toEqual(['SIGTERM', 'SIGTERM']);
    });
  });

  describe('keys typed in a terminal (pseudo-terminal from script(1))', () => {
    it.each([
      ['Ctrl-C', '\x03', 'SIGINT'],
      ['Ctrl-\\', '\x1c', 'SIGQUIT'],
    ])('%s reaches the launcher exactly once', async (_key, keystroke, signal) => {
      const report = reportPath();
      const terminal = startOnTerminal(ncclRun('report-launcher.js'), fixtureEnv(report));
      const ready = await waitForReport(report, isReady, { writer: terminal });
      terminal.stdin?.write(keystroke);
      const { status, marker, final } = await settleAndRelease(
        terminal,
        ready.ppid,
        report,
        signal,
      );
      expect(final.signals).toEqual([signal, marker]);
      expect(status).toBe(EXIT_CODE);
    });

    it('still relays a kill(1) of nccl-run that no key can send (SIGTERM)', async () => {
      const report = reportPath();
      const terminal = startOnTerminal(ncclRun('report-launcher.js'), fixtureEnv(report));
      const ready = await waitForReport(report, isReady, { writer: terminal });
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
});
