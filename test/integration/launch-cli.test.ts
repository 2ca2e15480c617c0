/**
 * The launch path through the real CLI (bin/nccl-run.js, built by `npm run
 * build`): torchrun's arguments arrive byte for byte, the chosen interface
 * reaches the launcher's environment, and SPEC "Exit status" holds end to
 * end. Signals through the CLI are in launch-signals.test.ts.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, readReport, removeReports, reportPath } from '../fixtures/fixture-report.js';
import { cliCommand } from '../fixtures/nccl-run-process.js';

afterAll(removeReports);

const BUILT_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Runs nccl-run to the end; the fixture's report goes to `report`. */
async function ncclRun(launcher: string, args: string[], env: Record<string, string> = {}) {
  const report = reportPath();
  const [node, ...cliArgs] = cliCommand(launcher, args) as [string, ...string[]];
  const result = await execa(node, cliArgs, {
    env: { PATH: process.env.PATH, FIXTURE_REPORT: report, ...env },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  return { status: result.exitCode, stderr: result.stderr, report: readReport(report) };
}

describe('launch through the nccl-run CLI', () => {
  beforeAll(() => {
    if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run npm run build first`);
  });

  it('passes torchrun arguments byte for byte, nccl-run look-alikes after the script included', async () => {
    const args = [
      '--nnodes=1',
      'train.py',
      'two words',
      '"double"',
      "'single'",
      '$(touch /tmp/nccl-run-launch-cli-shell-ran)',
      'a;b && c | d',
      '',
      'naïve 日本語 ✓',
      '--iface',
      'eth9',
      '--verify=peers',
      '--',
      '--dry-run',
    ];
    const { status, report } = await ncclRun('report-launcher.js', args);
    expect(status).toBe(0);
    expect(report?.argv).toEqual(args);
    expect(existsSync('/tmp/nccl-run-launch-cli-shell-ran')).toBe(false);
  });

  it('hands the launcher the interface variables for the chosen interface', async () => {
    const { report } = await ncclRun('report-launcher.js', ['train.py']);
    expect(report?.env).toMatchObject({ NCCL_SOCKET_IFNAME: '=lo', GLOO_SOCKET_IFNAME: 'lo' });
    expect(report?.env.FIXTURE_REPORT).toBeDefined();
  });

  it.each([0, 1, 2, 42, 255])('exits with the launcher code %i', async (code) => {
    const { status } = await ncclRun('report-launcher.js', ['train.py'], {
      FIXTURE_EXIT_CODE: String(code),
    });
    expect(status).toBe(code);
  });

  it('exits 137 when the launcher is killed by SIGKILL', async () => {
    const { status } = await ncclRun('self-signal.js', ['train.py'], { FIXTURE_SIGNAL: 'SIGKILL' });
    expect(status).toBe(137);
  });

  it('exits 127 naming a launcher that does not exist', async () => {
    const missing = join(dirname(fixture('x')), 'no-such-torchrun');
    const { status, stderr } = await ncclRun('no-such-torchrun', ['train.py']);
    expect(status).toBe(127);
    expect(stderr).toContain(missing);
  });

  it('exits 126 for a launcher that is not executable', async () => {
    const { status, stderr } = await ncclRun('not-executable.js', ['train.py']);
    expect(status).toBe(126);
    expect(stderr).toContain(fixture('not-executable.js'));
  });
});
