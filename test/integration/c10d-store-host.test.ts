/**
 * The c10d store-host trap on a real host: a namespace whose /etc/hosts maps
 * the machine's hostname to the management address, a data address as the
 * c10d endpoint, given as an address or as a name (trainer-0-data), and a
 * name for the management address that only torch 2.x recognises
 * (trainer-0-mgmt). explain only reads: nothing connects anywhere.
 */
import { hostname } from 'node:os';
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
  afterAll(() => lab.cleanup());

  const explain = async (...args: string[]) => {
    const { stdout } = await lab.exec(
      'a',
      process.execPath,
      [
        bin,
        'explain',
        '--json',
        '--log-level',
        'silent',
        '--rdzv-backend=c10d',
        '--nnodes=2',
        ...args,
        'train.py',
      ],
      { timeout: 15_000 },
    );
    return JSON.parse(String(stdout)) as { warnings: string[]; decision: { interface: string } };
  };

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
    const plan = await explain(`--rdzv-endpoint=${endpoint}:29400`);
    expect(plan.decision.interface).toBe('ens3f0');
    const warnings = plan.warnings.filter((w) => w.includes('c10d endpoint'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(subject);
    expect(warnings[0]).toMatch(
      /the hostname .*, its canonical name, an address it resolves to \(203\.0\.113\.40\) .*add --rdzv-conf is_host=1 on this node$/,
    );
  });

  it('warns about torch 1.13 for a name of the hostname’s address', async () => {
    const plan = await explain('--rdzv-endpoint=trainer-0-mgmt:29400');
    expect(plan.warnings).toContainEqual(
      expect.stringMatching(
        /^the c10d endpoint trainer-0-mgmt resolves to this node's address 203\.0\.113\.40, one its hostname .* resolves to: torch 2\.x hosts the store here, but torch 1\.13 .*add --rdzv-conf is_host=1 on this node$/,
      ),
    );
  });

  it('says nothing on the address the hostname resolves to, or with is_host', async () => {
    const onHostname = await explain('--rdzv-endpoint=203.0.113.40:29400');
    expect(onHostname.warnings.filter((w) => w.includes('c10d endpoint'))).toEqual([]);
    const withIsHost = await explain('--rdzv-endpoint=198.18.40.1:29400', '--rdzv-conf=is_host=1');
    expect(withIsHost.warnings.filter((w) => w.includes('c10d endpoint'))).toEqual([]);
  });
});
