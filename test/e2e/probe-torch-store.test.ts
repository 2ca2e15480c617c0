/**
 * The probe meets at the rendezvous port itself (SPEC --probe-port): the
 * store host's registry listens there during the check and hangs up first,
 * which leaves TIME_WAIT connections at that port. torch's store binds it
 * right after, as torchrun would once nccl-run hands over: the real
 * TCPStore of torch 1.13 (this host's /usr/bin/torchrun's Python) and of
 * torch 2.6 (the Debian 13 lab root), in the namespace where the check ran.
 */
import { expect, it } from 'vitest';
import { startCheck } from '../integration/check-on-node.js';
import { inRoot, labRoot, torch26Env } from '../lab/debian-root.js';
import { torchrunInterpreter } from '../lab/host-torchrun.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const root = netnsUnavailable === null ? labRoot('trixie') : null;
const python113 = torchrunInterpreter();
const unavailable =
  netnsUnavailable ??
  (root !== null && 'error' in root ? root.error : null) ??
  (python113 === null ? 'no /usr/bin/torchrun with a Python to run its TCPStore' : null);

/** torch's store as torchrun's agent makes it: master on every address at the port, then a client's set and get. */
const STORE = `
import sys
from datetime import timedelta
import torch, torch.distributed as dist
port = int(sys.argv[1])
extra = {'use_libuv': False, 'wait_for_workers': False} if torch.__version__.startswith('2') else {}
master = dist.TCPStore('0.0.0.0', port, 2, True, timeout=timedelta(seconds=10), **extra)
client = dist.TCPStore('198.18.50.1', port, 2, False, timeout=timedelta(seconds=10), **extra)
client.set('probe', 'done')
print(torch.__version__, master.get('probe').decode())
`;

tier("torch's store binds the rendezvous port the probe met at", unavailable, () => {
  it('right after a --verify peers check there, TIME_WAIT and all, on torch 1.13 and 2.6', async () => {
    const lab = new Lab('pt');
    try {
      await lab.host('sw');
      await lab.ip('sw', 'link', 'add', 'data', 'type', 'bridge');
      await lab.ip('sw', 'link', 'set', 'data', 'up');
      const hosts = '127.0.0.1 localhost\n198.18.50.1 node-a\n198.18.50.2 node-b\n';
      for (const [host, address] of [
        ['a', '198.18.50.1'],
        ['b', '198.18.50.2'],
      ] as const) {
        await lab.host(host, hosts);
        await lab.link(host, 'ens3f0', 'sw', `d-${host}`);
        await lab.ip('sw', 'link', 'set', `d-${host}`, 'master', 'data');
        await lab.addr(host, 'ens3f0', `${address}/24`);
      }
      for (const [port, python] of [
        [29510, 'host'],
        [29520, 'trixie'],
      ] as const) {
        const args = (rank: number) => [
          '--iface',
          'ens3f0',
          '--verify',
          'peers',
          '--verify-timeout',
          '30s',
          '--nnodes=2',
          `--node_rank=${rank}`,
          '--master_addr=node-a',
          `--master_port=${port}`,
          'train.py',
        ];
        const runs = await Promise.all([
          startCheck(lab, 'a', { hostname: 'node-a', args: args(0) }),
          startCheck(lab, 'b', { hostname: 'node-b', args: args(1) }),
        ]);
        for (const run of runs) expect(run.code, JSON.stringify(run.error)).toBe(0);
        const waiting = await lab.exec('a', 'ss', [
          '-Htan',
          'state',
          'time-wait',
          `( sport = :${port} )`,
        ]);
        expect(String(waiting.stdout).trim()).not.toBe('');
        const store =
          python === 'host'
            ? await lab.exec('a', python113 as string, ['-c', STORE, String(port)], {
                timeout: 60_000,
              })
            : await lab.exec(
                'a',
                ...((argv) => [argv[0] as string, argv.slice(1)] as const)(
                  inRoot((root as { path: string }).path, 'node-a', 'python3', [
                    '-c',
                    STORE,
                    String(port),
                  ]),
                ),
                { env: { ...torch26Env }, timeout: 60_000 },
              );
        expect(String(store.stdout).trim()).toMatch(
          python === 'host' ? /^1\.13\S* done$/ : /^2\.6\S* done$/,
        );
      }
    } finally {
      await lab.cleanup();
    }
  });
});
