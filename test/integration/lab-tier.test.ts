/**
 * The lab tiers' own rule (test/lab/tier.ts), through a real vitest run of a
 * tier whose tool is missing: skipped with its reason in the report here,
 * one failing test that says why under CI=true, where a silent skip would
 * hide a broken install step.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

interface Assertion {
  fullName: string;
  status: string;
  failureMessages: string[];
}

async function runFixture(ci: boolean): Promise<{ exitCode: number; tests: Assertion[] }> {
  const env: Record<string, string | undefined> = { ...process.env, CI: ci ? 'true' : undefined };
  const result = await execa(
    'npx',
    ['vitest', 'run', '--config', 'test/fixtures/tier/vitest.config.ts', '--reporter', 'json'],
    { cwd: ROOT, env, extendEnv: false, reject: false },
  );
  const report = JSON.parse(result.stdout) as { testResults: { assertionResults: Assertion[] }[] };
  return {
    exitCode: result.exitCode ?? -1,
    tests: report.testResults.flatMap((file) => file.assertionResults),
  };
}

describe('a lab tier whose tool is missing', () => {
  it('is skipped with the first missing tool in its name, and the tier that can run runs', async () => {
    const { exitCode, tests } = await runFixture(false);
    expect(exitCode).toBe(0);
    const status = Object.fromEntries(tests.map((test) => [test.fullName, test.status]));
    expect(status).toEqual({
      'a tier without podman (skipped: podman is not installed (apt-get install podman)) would run the pods':
        'skipped',
      'one test without podman (skipped: podman is not installed (apt-get install podman))':
        'skipped',
      'a tier with what it needs runs': 'passed',
    });
  });

  it('under CI=true fails, saying the tier could not run and why', async () => {
    const { exitCode, tests } = await runFixture(true);
    expect(exitCode).toBe(1);
    const failed = tests.filter((test) => test.status === 'failed');
    expect(failed.map((test) => test.fullName)).toEqual([
      'a tier without podman a tier without podman: cannot run under CI',
      'one test without podman: cannot run under CI',
    ]);
    for (const test of failed) {
      expect(test.failureMessages[0]).toContain(
        'this must run under CI=true, but podman is not installed (apt-get install podman)',
      );
    }
  });
});
