/**
 * SPEC "NCCL's own pick": where a kept NCCL_SOCKET_IFNAME matches several
 * interfaces, NCCL's socket transport listens on each (its data-plane
 * devices) and the other nodes' channels connect to them; `--verify peers`
 * dials each device (src/peers/data-devices.ts). Two nodes in network
 * namespaces, the built CLI on each:
 * - `eth` matches eth0 and eth1 on both, two networks both nodes share: the
 *   mesh passes, having reached the other node's eth1 too;
 * - `bond0` also matches bond0.2973 on one node, holding only a link-local
 *   address on a link the master is not on (NVIDIA/nccl#177's layout): the
 *   master cannot dial it, and both nodes fail, 75, naming that device.
 *
 * Addresses: 198.18.0.0/15 only, and 169.254.0.0/16 where a link-local
 * address is the point.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import { type CheckRun, startCheck } from './check-on-node.js';

const job = (rank: number, master: string) => [
  ...['--verify', 'peers', '--verify-timeout', '6s'],
  ...['--nnodes=2', `--node_rank=${rank}`, `--master_addr=${master}`, '--master_port=29500'],
  'train.py',
];

const said = (run: CheckRun) => run.logs.map((line) => line.msg).join('\n');

tier('--verify peers dials every data-plane device', netnsUnavailable, () => {
  const lab = new Lab('vpd');
  afterAll(() => lab.cleanup());

  beforeAll(async () => {
    for (const host of ['a', 'b', 'x']) await lab.host(host);
    // Two networks a and b share: the job's and a second one.
    await lab.link('a', 'eth0', 'b', 'eth0');
    await lab.addr('a', 'eth0', '198.18.52.1/24');
    await lab.addr('b', 'eth0', '198.18.52.2/24');
    await lab.link('a', 'eth1', 'b', 'eth1');
    await lab.addr('a', 'eth1', '198.18.53.1/24');
    await lab.addr('b', 'eth1', '198.18.53.2/24');
    // On b, bond0 is the job's network too, and bond0.2973 a link-local link to x alone.
    await lab.link('a', 'mb0', 'b', 'bond0');
    await lab.addr('a', 'mb0', '198.18.54.1/24');
    await lab.addr('b', 'bond0', '198.18.54.2/24');
    await lab.link('b', 'bond0.2973', 'x', 'eth0');
    await lab.addr('b', 'bond0.2973', '169.254.29.73/16');
  });

  it('NCCL_SOCKET_IFNAME=eth on both nodes: each dials the other node’s eth1 too, and the mesh passes', async () => {
    const env = { NCCL_SOCKET_IFNAME: 'eth' };
    const [master, worker] = await Promise.all([
      startCheck(lab, 'a', { hostname: 'vpd-a', env, args: job(0, '198.18.52.1') }),
      startCheck(lab, 'b', { hostname: 'vpd-b', env, args: job(1, '198.18.52.1') }),
    ]);
    expect(master.code, said(master)).toBe(0);
    expect(worker.code, said(worker)).toBe(0);
    expect(said(worker)).toMatch(
      /reached vpd-a's data-plane device eth1 198\.18\.53\.1 port \d+ besides its eth0/,
    );
    expect(said(master)).toMatch(
      /reached vpd-b's data-plane device eth1 198\.18\.53\.2 port \d+ besides its eth0/,
    );
  });

  it('NCCL_SOCKET_IFNAME=bond0 matching a link-local bond0.2973 on one node: both fail, 75, naming it (NVIDIA/nccl#177)', async () => {
    const [master, worker] = await Promise.all([
      startCheck(lab, 'a', {
        hostname: 'vpd-a',
        env: { NCCL_SOCKET_IFNAME: 'mb0' },
        args: job(0, '198.18.54.1'),
      }),
      startCheck(lab, 'b', {
        hostname: 'vpd-b',
        env: { NCCL_SOCKET_IFNAME: 'bond0' },
        args: job(1, '198.18.54.1'),
      }),
    ]);
    expect(master.code, said(master)).toBe(75);
    expect(worker.code, said(worker)).toBe(75);
    const dialled = master.error?.details.join('\n') ?? '';
    expect(dialled).toMatch(
      /vpd-b's data-plane device bond0\.2973 169\.254\.29\.73 port \d+ did not take a connection \(unreachable, ENETUNREACH\): it is link-local/,
    );
    const listened = worker.error?.details.join('\n') ?? '';
    expect(listened).toMatch(
      /did not reach this node's data-plane device bond0\.2973 169\.254\.29\.73 port \d+ before its own check ended.*set NCCL_SOCKET_IFNAME==bond0,/,
    );
  });
});
