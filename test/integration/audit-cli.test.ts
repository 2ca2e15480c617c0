/**
 * `nccl-run audit` and `--nccl-log` through the real CLI (bin/nccl-run, the
 * built dist/): paths, folders and a pipe into its standard input, the exit
 * statuses of SPEC "Exit status" (0, 75, 66, 64), --help, and the variables
 * --nccl-log exports (env --format json, read from host facts, nothing launched).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/nccl-run');
const fixtures = join(root, 'test/fixtures/nccl-logs');
const work = mkdtempSync(join(tmpdir(), 'aud-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function ncclRun(
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
) {
  const run = await execa(bin, args, {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    extendEnv: false,
    reject: false,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
    timeout: 20_000,
  });
  return { status: run.exitCode, stdout: run.stdout, stderr: run.stderr };
}

describe('nccl-run audit', () => {
  it('a folder of logs with a failure: the table, the findings, exit 75', async () => {
    const run = await ncclRun(['audit', fixtures]);
    expect(run.status, run.stderr).toBe(75);
    expect(run.stdout).toMatch(/^rank +host:pid/);
    // Every file of the folder was read: its hosts are all there.
    for (const host of ['gpu-b', 'p5-b', 'dgx-2', 'node-b', 'h100-02'])
      expect(run.stdout).toContain(host);
    expect(run.stdout).toContain('FAIL the net plugin did not load or did not initialise');
  });

  it('--json after the path, and a healthy log: exit 0, {ranks, findings}', async () => {
    const run = await ncclRun(['audit', join(fixtures, 'healthy-ib-2.26.txt'), '--json']);
    expect(run.status, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.findings).toEqual([]);
    expect(json.ranks.map((r: { nccl: { network: string } }) => r.nccl.network)).toEqual([
      'IB',
      'IB',
    ]);
  });

  it('a pipe into standard input, with `-` and with no path', async () => {
    const input = readFileSync(join(fixtures, 'ib-fallback-2.27.txt'), 'utf8');
    for (const args of [['audit', '-'], ['audit']]) {
      const run = await ncclRun(args, { input });
      expect(run.status, run.stderr).toBe(75);
      expect(run.stdout).toContain('-:24: ');
    }
  });

  it('nothing at INFO: exit 66, one line saying NCCL_DEBUG must be INFO and how', async () => {
    const run = await ncclRun(['audit', '-'], { input: 'Traceback (most recent call last):\n' });
    expect(run.status).toBe(66);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/NCCL_DEBUG=INFO.*nccl-run --nccl-log DIR/);
  });

  it('a path that is not there is 66 naming it; an option audit does not take is 64', async () => {
    const missing = await ncclRun(['audit', join(work, 'no-such-dir')]);
    expect(missing.status).toBe(66);
    expect(missing.stderr).toContain(`cannot read ${join(work, 'no-such-dir')}`);
    const unknown = await ncclRun(['audit', '--iface', 'eth0', fixtures]);
    expect(unknown.status).toBe(64);
    expect(unknown.stderr).toMatch(
      /audit: unknown option '--iface'; audit takes \[--json\] \[PATH\.\.\.\|-\]/,
    );
    const bad = await ncclRun(['audit', '--json=maybe', fixtures]);
    expect(bad.status).toBe(64);
    expect(bad.stderr).toMatch(/--json: bad value 'maybe'/);
  });

  it('--help names audit and --nccl-log', async () => {
    const run = await ncclRun(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/nccl-run audit \[--json\] \[PATH\.\.\.\|-\]/);
    expect(run.stdout).toMatch(/--nccl-log/);
  });
});

describe('--nccl-log DIR', () => {
  const facts = join(root, 'test/fixtures/facts/lab-mgmt-first.json');
  const job = [
    '--facts',
    facts,
    '--verify',
    'none',
    '--nnodes=2',
    '--node_rank=1',
    '--master_addr=198.18.2.1',
    'train.py',
  ];

  it('exports INFO, the subsystems audit reads and DIR/%h.%p.log, the folder made', async () => {
    const dir = join(work, 'made', 'nccl');
    const run = await ncclRun(['env', '--format', 'json', '--nccl-log', dir, ...job]);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      NCCL_DEBUG: 'INFO',
      NCCL_DEBUG_SUBSYS: 'INIT,BOOTSTRAP,NET,ENV',
      NCCL_DEBUG_FILE: `${dir}/%h.%p.log`,
    });
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  it("a relative DIR from NCCL_RUN_NCCL_LOG is made absolute; the user's NCCL_DEBUG=WARN is kept, with a warning", async () => {
    const run = await ncclRun(['env', '--format', 'json', ...job], {
      env: { NCCL_RUN_NCCL_LOG: 'rel-logs', NCCL_DEBUG: 'WARN' },
    });
    expect(run.status, run.stderr).toBe(0);
    const env = JSON.parse(run.stdout);
    expect(env.NCCL_DEBUG_FILE).toBe(`${join(work, 'rel-logs')}/%h.%p.log`);
    expect(env.NCCL_DEBUG).toBeUndefined();
    expect(run.stderr).toMatch(/NCCL_DEBUG=WARN \(yours, kept\) hides what `nccl-run audit` reads/);
  });

  it('a DIR that cannot be made: one line, 64 for the flag, 78 for the variable', async () => {
    const file = join(work, 'a-file');
    writeFileSync(file, '');
    const flag = await ncclRun(['env', '--nccl-log', join(file, 'x'), ...job]);
    expect(flag.status).toBe(64);
    expect(flag.stderr.trim()).toBe(
      `nccl-run: --nccl-log: bad value '${join(file, 'x')}': expected a folder that exists or can be made, and is writable (ENOTDIR)`,
    );
    const variable = await ncclRun(['env', ...job], {
      env: { NCCL_RUN_NCCL_LOG: join(file, 'x') },
    });
    expect(variable.status).toBe(78);
    expect(variable.stderr).toMatch(/^nccl-run: NCCL_RUN_NCCL_LOG: bad value/);
  });
});
