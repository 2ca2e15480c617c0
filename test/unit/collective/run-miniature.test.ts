/**
 * The miniature's process (src/collective/run-miniature.ts) with a stand-in
 * launcher, a real shell: the job's environment plus NCCL's INFO into the
 * private folder, and at the timeout the launcher and what it started end
 * with it, in its process group. (The real launcher, torchrun, runs in the
 * e2e tier: test/e2e/collective.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { miniatureEnv, runMiniature, writeProgram } from '../../../src/collective/run-miniature.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';

const privateDir = tempDirs('col-unit-');

/** Running: a process whose state is not Z (a zombie waits for a reaper this machine's pid 1 may not be). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

describe('runMiniature', () => {
  it("gives the launcher the job's environment and NCCL's INFO into the private folder", async () => {
    const dir = privateDir();
    writeProgram(dir);
    const run = await runMiniature({
      file: '/bin/sh',
      argv: ['-c', 'env > "$1/env.txt"', 'sh', dir],
      env: miniatureEnv({ PATH: process.env.PATH ?? '', JOB: 'mine' }, dir),
      dir,
      timeoutMs: 30_000,
    });
    expect(run).toMatchObject({ status: 0, timedOut: false });
    const env = readFileSync(join(dir, 'env.txt'), 'utf8').split('\n');
    expect(env).toEqual(
      expect.arrayContaining([
        'JOB=mine',
        'NCCL_DEBUG=INFO',
        'NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,NET,ENV',
        `NCCL_DEBUG_FILE=${join(dir, 'nccl', '%h.%p.log')}`,
      ]),
    );
    expect(readFileSync(join(dir, 'collective.py'), 'utf8')).toMatch(/init_process_group/);
  });

  it('at the timeout, ends the launcher and what it started', async () => {
    const dir = privateDir();
    // A launcher whose child ignores SIGTERM, as a hung worker may: the group's SIGKILL ends it.
    const run = await runMiniature({
      file: '/bin/sh',
      argv: [
        '-c',
        `sh -c 'trap "" TERM; echo $$ > "$1/worker"; while :; do sleep 1; done' sh "$1" & wait`,
        'sh',
        dir,
      ],
      env: { PATH: process.env.PATH ?? '' },
      dir,
      timeoutMs: 1_000,
    });
    expect(run).toMatchObject({ status: null, timedOut: true });
    const worker = Number(readFileSync(join(dir, 'worker'), 'utf8'));
    expect(alive(worker)).toBe(false);
  }, 20_000);

  it('does not wait on pipes a worker in a session of its own still holds (torch 2.x)', async () => {
    const dir = privateDir();
    const run = await runMiniature({
      file: '/bin/sh',
      argv: [
        '-c',
        'setsid sh -c \'echo $$ > "$1/worker"; exec sleep 30\' sh "$1" & sleep 1; exit 4',
        'sh',
        dir,
      ],
      env: { PATH: process.env.PATH ?? '' },
      dir,
      timeoutMs: 30_000,
    });
    expect(run).toMatchObject({ status: 4, timedOut: false });
    process.kill(Number(readFileSync(join(dir, 'worker'), 'utf8')), 'SIGKILL');
  }, 10_000);

  it('reports a status the launcher exits with', async () => {
    const dir = privateDir();
    const run = await runMiniature({
      file: '/bin/sh',
      argv: ['-c', 'echo gone >&2; exit 3'],
      env: {},
      dir,
      timeoutMs: 30_000,
    });
    expect(run).toMatchObject({ status: 3, timedOut: false });
    expect(run.output).toBe('gone\n');
  });
});
