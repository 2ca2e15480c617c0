/**
 * Issue 13, a master with several addresses: its name resolves to
 * [management, data] and the master filters by strict reverse path
 * (rp_filter=1). Dialling the first address from the chosen data address is
 * dropped there, though torch's TCPStore, which imposes no source, connects.
 * So the store is checked as TCPStore reaches it, and the data path apart.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import { listenInside } from './verify-lab.js';

const HOSTS = '203.0.113.1 master\n198.18.10.1 master\n';

tier('verify master: a master name with a management and a data address', netnsUnavailable, () => {
  const lab = new Lab('vma');
  let listener: { stop(): void } | undefined;

  beforeAll(async () => {
    await lab.host('m');
    await lab.host('w', `127.0.0.1 localhost\n${HOSTS}`);
    await lab.link('m', 'eth0', 'w', 'eth0');
    await lab.link('m', 'ens3f0', 'w', 'ens3f0');
    await lab.addr('m', 'eth0', '203.0.113.1/24');
    await lab.addr('w', 'eth0', '203.0.113.2/24');
    await lab.addr('m', 'ens3f0', '198.18.10.1/24');
    await lab.addr('w', 'ens3f0', '198.18.10.2/24');
    for (const knob of ['all', 'eth0']) {
      await lab.exec('m', 'sysctl', ['-qw', `net.ipv4.conf.${knob}.rp_filter=1`]);
    }
    listener = await listenInside(lab, 'm', '0.0.0.0', 29500);
  });
  afterAll(async () => {
    listener?.stop();
    await lab.cleanup();
  });

  it('passes: the store as TCPStore reaches it, and the data address from the data address', async () => {
    const result = await lab.exec(
      'w',
      BIN,
      [
        ...['check', '--json', '--iface', 'ens3f0', '--verify', 'master', '--verify-timeout', '8s'],
        ...['--nnodes=2', '--node_rank=1', '--master_addr=master'],
      ],
      { reject: false, timeout: 20_000 },
    );
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const report = JSON.parse(String(result.stdout));
    expect(report.results).toEqual([
      expect.objectContaining({ check: 'connect', address: '203.0.113.1', ok: true }),
      expect.objectContaining({ check: 'data path', address: '198.18.10.1', ok: true }),
    ]);
  });
});
