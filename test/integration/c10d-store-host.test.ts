/**
 * The c10d store-host trap on a real host: a namespace whose /etc/hosts maps
 * the machine's hostname to the management address, a data address as the
 * c10d endpoint, given as an address or as a name (trainer-0-data), and a
 * name for the management address that only torch 2.x recognises
 * (trainer-0-mgmt). explain only reads: nothing connects anywhere.
 *
 * The warning is for the torch that will run (SPEC "The stack"): each case
 * names its torch through PYTHONPATH, a folder holding a torch package whose
 * torch/version.py states the version (nothing imports it; explain reads
 * that file), launched as `/usr/bin/python3 -m torch.distributed.run`; a launcher that
 * is no Python leaves the torch unknown, and then both rules count.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const bin = fileURLToPath(new URL('../../bin/nccl-run.js', import.meta.url));

tier('c10d endpoint on an address the hostname does not resolve to', netnsUnavailable, () => {
  const lab = new Lab('c10d');

  beforeAll(async () => {
    await lab.host(
      'a',
      `127.0.0.1 localhost\n203.0.113.40 ${hostname()}\n198.18.40.1 trainer-0-data\n203.0.113.40 trainer-0-mgmt\n`,
    );
    await lab.host('b');
    await lab.link('a', 'ens3f0', 'b', 'ens3f0');
    await lab.link('a', 'eth0', 'b', 'eth0');
    await lab.addr('a', 'ens3f0', '198.18.40.1/24');
    await lab.addr('a', 'eth0', '203.0.113.40/24');
  });
  const site = mkdtempSync(join(tmpdir(), 'c10d-torch-'));
  afterAll(() => {
    rmSync(site, { recursive: true, force: true });
    return lab.cleanup();
  });

  /** A torch of `version` on PYTHONPATH for python3; null: a launcher that names no torch. */
  const torchOf = (version: string | null): { launcher: string; env: NodeJS.ProcessEnv } => {
    if (version === null) return { launcher: '/bin/true', env: {} };
    const dir = join(site, version);
    mkdirSync(join(dir, 'torch'), { recursive: true });
    writeFileSync(join(dir, 'torch', '__init__.py'), '');
    writeFileSync(join(dir, 'torch', 'version.py'), `__version__ = '${version}'\n`);
    return { launcher: '/usr/bin/python3 -m torch.distributed.run', env: { PYTHONPATH: dir } };
  };

  const explainWith = async (torch: string | null, ...args: string[]) => {
    const { launcher, env } = torchOf(torch);
    const { stdout } = await lab.exec(
      'a',
      process.execPath,
      [
        bin,
        'explain',
        '--json',
        '--log-level',
        'silent',
        '--torchrun',
        launcher,
        '--rdzv_backend=c10d',
        '--nnodes=2',
        ...args,
        'train.py',
      ],
      { timeout: 15_000, env: { ...process.env, ...env } },
    );
    return JSON.parse(String(stdout)) as {
      warnings: string[];
      decision: { interface: string };
      torch: { version: string | null };
    };
  };
  const explain = (...args: string[]) => explainWith(null, ...args);

  it.each([
    [
      'the data address',
      '198.18.40.1',
      /^the c10d endpoint 198\.18\.40\.1 is this node's address, /,
    ],
    [
      'a name for the data address',
      'trainer-0-data',
      /^the c10d endpoint trainer-0-data resolves to this node's address 198\.18\.40\.1, /,
    ],
  ])('warns on %s and names the fix', async (_case, endpoint, subject) => {
    const plan = await explain(`--rdzv_endpoint=${endpoint}:29400`);
    expect(plan.decision.interface).toBe('ens3f0');
    const warnings = plan.warnings.filter((w) => w.includes('c10d endpoint'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(subject);
    expect(warnings[0]).toMatch(
      /the hostname .*, its canonical name, an address it resolves to \(203\.0\.113\.40\) .*add --rdzv-conf is_host=1 on this node$/,
    );
  });

  it('for an unknown torch, applies 2.x’s rule and names 1.13, which would host a name of the hostname’s address on no node', async () => {
    const plan = await explain('--rdzv_endpoint=trainer-0-mgmt:29400');
    expect(plan.warnings.filter((w) => w.includes('c10d endpoint'))).toEqual([]);
    expect(plan.warnings).toContainEqual(
      expect.stringMatching(
        /^the torch behind \/bin\/true is unknown .* applies torch 2\.14's rules, .* but torch 1\.13 would host the c10d store on no node \(add --rdzv-conf is_host=1 on this node\); say which torch it is with --torch-version$/,
      ),
    );
  });

  it('warns for that name only where the torch that will run is 1.13', async () => {
    const endpoint = '--rdzv_endpoint=trainer-0-mgmt:29400';
    const stores = (plan: { warnings: string[] }) =>
      plan.warnings.filter((w) => w.includes('c10d endpoint'));
    const old = await explainWith('1.13.1', endpoint);
    expect(old.torch.version).toBe('1.13.1');
    expect(stores(old)).toEqual([
      expect.stringMatching(
        /^the c10d endpoint trainer-0-mgmt resolves to this node's address 203\.0\.113\.40, one its hostname .* resolves to, but torch 1\.13\.1 compares a name only with the hostname and its canonical name \(torch 2\.x would host the store here\), so no node would host it/,
      ),
    ]);
    for (const version of ['2.6.0+debian', '2.14.1+debian']) {
      const plan = await explainWith(version, endpoint);
      expect(plan.torch.version).toBe(version);
      expect(stores(plan)).toEqual([]);
    }
  });

  it('says nothing on the address the hostname resolves to, or with is_host', async () => {
    const onHostname = await explain('--rdzv_endpoint=203.0.113.40:29400');
    expect(onHostname.warnings.filter((w) => w.includes('c10d endpoint'))).toEqual([]);
    const withIsHost = await explain('--rdzv_endpoint=198.18.40.1:29400', '--rdzv_conf=is_host=1');
    expect(withIsHost.warnings.filter((w) => w.includes('c10d endpoint'))).toEqual([]);
  });
});
