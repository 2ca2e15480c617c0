/**
 * SPEC "Readiness" through the real CLI: a node that will certainly fail
 * the job is refused with 78 before anything starts, and says why and how
 * to fix it; --skip-check turns that check off, and explain shows every
 * check (its section, and `readiness` in --json). The node is this host in
 * a mount namespace whose /dev/shm is a read-only tmpfs, as a container
 * run with a read-only /dev/shm has it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { expect, it } from 'vitest';
import { tier } from '../lab/tier.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/nccl-run');
const launcher = join(root, 'test/fixtures/report-launcher.js');
const mountsUnavailable =
  process.getuid?.() === 0
    ? null
    : 'a mount namespace with its own /dev/shm needs root (CI runs as root)';

/** nccl-run (`command`, '' for the launch) in a mount namespace where /dev/shm is a read-only tmpfs. */
async function onReadOnlyShm(command: '' | 'explain' | 'check', args: string[]) {
  const cwd = mkdtempSync(join(tmpdir(), 'nccl-run-readiness-'));
  const report = join(cwd, 'report.json');
  const result = await execa(
    'unshare',
    [
      '--mount',
      'sh',
      '-c',
      'mount -t tmpfs -o ro,size=64m tmpfs /dev/shm && exec "$@"',
      'sh',
      bin,
      ...(command === '' ? [] : [command]),
      '--torchrun',
      launcher,
      '--log-format',
      'json',
      ...args,
    ],
    {
      cwd,
      env: { PATH: process.env.PATH ?? '', FIXTURE_REPORT: report },
      extendEnv: false,
      reject: false,
      timeout: 30_000,
    },
  );
  const launched = existsSync(report);
  rmSync(cwd, { recursive: true, force: true });
  return { ...result, launched };
}

const JOB = ['--nnodes=1', '--nproc_per_node=2', 'train.py'];

tier('readiness through the CLI', mountsUnavailable, () => {
  it('two local ranks and no writable /dev/shm: run is 78 before the launch, naming the check, its evidence and the fix', async () => {
    const result = await onReadOnlyShm('', JOB);
    expect(result.exitCode).toBe(78);
    const error = result.stderr
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .find((line) => line.level === 50);
    expect(error?.msg).toMatch(
      /^this node is not ready for the job: shm: \/dev\/shm cannot be written \(EROFS\): .* 2 local ranks \(--nproc-per-node 2\); fix: /,
    );
    expect(result.launched).toBe(false);
  });

  it('check --json says so too: the readiness array with the refused check, and ok false', async () => {
    const checked = await onReadOnlyShm('check', ['--json', ...JOB]);
    expect(checked.exitCode).toBe(78);
    const report = JSON.parse(checked.stdout) as {
      ok: boolean;
      readiness: { check: string; level: string }[];
    };
    expect(report.ok).toBe(false);
    expect(report.readiness[0]).toMatchObject({ check: 'shm', level: 'refused' });
  });

  it('--skip-check shm lets it start, and explain lists the check as skipped', async () => {
    const skipped = await onReadOnlyShm('', ['--skip-check', 'shm', ...JOB]);
    expect(skipped.exitCode).toBe(0);
    expect(skipped.launched).toBe(true);
    const explained = await onReadOnlyShm('explain', ['--skip-check', 'shm', ...JOB]);
    expect(explained.stdout).toMatch(
      /^Readiness\n {2}shm {8}skipped {2}skipped \(--skip-check\)$/m,
    );
  });

  it('explain --json has the readiness array, the refused check among the others', async () => {
    const explained = await onReadOnlyShm('explain', ['--json', ...JOB]);
    expect(explained.exitCode).toBe(0);
    const { readiness } = JSON.parse(explained.stdout) as {
      readiness: {
        check: string;
        ok: boolean;
        level: string;
        evidence: string;
        fix: string | null;
      }[];
    };
    expect(readiness.map((finding) => finding.check)).toEqual([
      'shm',
      'memlock',
      'nofile',
      'mtu',
      'rp-filter',
      'gpus',
    ]);
    expect(readiness[0]).toMatchObject({ check: 'shm', ok: false, level: 'refused' });
    expect(readiness[0]?.fix).toMatch(/\S/);
  });
});
