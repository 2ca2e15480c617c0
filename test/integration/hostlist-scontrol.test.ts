/**
 * The Slurm hostlist syntax against Slurm itself: `scontrol show hostnames`
 * expands each list with libslurm's hostlist_create, offline (it needs only
 * a slurm.conf to start), and expandHostlist must give the same hosts in the
 * same order.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { expandHostlist } from '../../src/cluster/slurm-hostlist.js';
import { tier } from '../lab/tier.js';

function scontrolUnavailable(): string | null {
  try {
    execFileSync('sh', ['-c', 'command -v scontrol'], { stdio: 'ignore' });
    return null;
  } catch {
    return "Slurm's scontrol is not installed (slurm-wlm)";
  }
}

const LISTS = [
  'alpha,beta,gamma',
  'tux[0-5,12,20-25]',
  'node1,node[2-5,12]',
  'b[1-3],d[1,3-4],e1',
  'n[01-10]',
  'n[8-10]',
  'n[1,01]',
  'n[9,010]',
  'linux[0000-0011]',
  'rack[1-2]-n[01-02]',
  'a[1-2]b[1-2]c[1-2]',
  'login,n[1-2],login',
];

/** What Slurm calls "Invalid hostlist", and expandHostlist refuses too. */
const INVALID = ['gpu-[1-3]-ib', 'n[3-1]', 'n[a-b]'];

/** What libslurm takes for something (slurm-hostlist.ts: "silently accepts nonsense") and nccl-run refuses. */
const REFUSED_HERE_ONLY = [
  ['n[1-]', 'n1'],
  ['n[1-', 'n]'],
];

tier('Slurm hostlists, expanded by Slurm itself', scontrolUnavailable(), () => {
  const dir = mkdtempSync(join(tmpdir(), 'ncr-scontrol-'));
  const conf = join(dir, 'slurm.conf');
  writeFileSync(
    conf,
    'ClusterName=lab\nSlurmctldHost=localhost\nNodeName=n1\nPartitionName=p Nodes=n1\n',
  );
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const scontrol = (list: string) =>
    execa('scontrol', ['show', 'hostnames', list], { env: { SLURM_CONF: conf } });

  it.each(LISTS)('%s', async (list) => {
    const { stdout } = await scontrol(list);
    expect(expandHostlist(list)).toEqual(stdout.split('\n'));
  });

  it.each(INVALID)('%s is refused by both', async (list) => {
    const { stdout, stderr } = await scontrol(list);
    expect([stdout, stderr]).toEqual(['', expect.stringContaining(`Invalid hostlist: ${list}`)]);
    expect(() => expandHostlist(list)).toThrow();
  });

  it.each(REFUSED_HERE_ONLY)('%s: Slurm reads %s, nccl-run refuses it', async (list, slurm) => {
    expect((await scontrol(list)).stdout).toBe(slurm);
    expect(() => expandHostlist(list)).toThrow();
  });
});
