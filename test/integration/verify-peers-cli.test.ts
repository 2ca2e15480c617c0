/**
 * `nccl-run check --verify peers` as users run it (the built CLI), on nodes
 * in network namespaces, each with its own host name (a UTS namespace) and
 * what sysfs says about its NICs faked per node (a mount namespace, a bind
 * mount over /sys/class/net/IF/speed: shared/LAB.md):
 * - `agree` on three nodes whose data NICs are named differently, whose
 *   names resolve to the management network the master is given on, and
 *   each with a docker0 at one and the same address, made the fastest by
 *   sysfs: every node takes its own data NIC, never docker0;
 * - sixteen nodes at once, none with a peer list.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import { startCheck } from './check-on-node.js';

/** Every namespace's resolver: files first, then a DNS server that is its own loopback. */
const NSSWITCH = 'hosts: files dns\n';
const RESOLV = 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n';

tier('nccl-run check --verify peers on real nodes', netnsUnavailable, () => {
  const lab = new Lab('vpc');
  const cwd = mkdtempSync(join(tmpdir(), 'ncr-peers-cli-'));
  const speedFile = (mbps: number) => {
    const file = join(cwd, `speed-${mbps}`);
    writeFileSync(file, `${mbps}\n`);
    return file;
  };

  async function host(name: string, hosts: string): Promise<void> {
    await lab.host(name, hosts);
    writeFileSync(`/etc/netns/${lab.ns(name)}/nsswitch.conf`, NSSWITCH);
    writeFileSync(`/etc/netns/${lab.ns(name)}/resolv.conf`, RESOLV);
  }

  /** A link from the node to a bridge of the switch, with its address. */
  async function plug(node: string, iface: string, bridge: string, cidr: string): Promise<void> {
    const port = `${bridge}-${node}`.slice(0, 15);
    await lab.link(node, iface, 'sw', port);
    await lab.ip('sw', 'link', 'set', port, 'master', bridge);
    await lab.addr(node, iface, cidr);
  }

  const AGREE = [
    { name: 'gpu-a', data: 'ens3f0' },
    { name: 'gpu-b', data: 'enp65s0' },
    { name: 'gpu-c', data: 'eth4' },
  ];
  const mgmt = (i: number) => `203.0.113.${21 + i}`;
  const data = (i: number) => `198.18.60.${1 + i}`;
  const FLEET = Array.from({ length: 16 }, (_, i) => `n${String(i).padStart(2, '0')}`);
  const fleet = (i: number) => `198.18.61.${1 + i}`;

  beforeAll(async () => {
    await lab.host('sw');
    for (const bridge of ['mgmt', 'data', 'fleet']) {
      await lab.ip('sw', 'link', 'add', bridge, 'type', 'bridge');
      await lab.ip('sw', 'link', 'set', bridge, 'up');
    }
    const agreeHosts = `127.0.0.1 localhost\n${AGREE.map((node, i) => `${mgmt(i)} ${node.name}`).join('\n')}\n`;
    for (const [i, node] of AGREE.entries()) {
      await host(node.name, agreeHosts);
      await plug(node.name, 'eno1', 'mgmt', `${mgmt(i)}/24`);
      await plug(node.name, node.data, 'data', `${data(i)}/24`);
      // docker0 as docker leaves it on every host: one address, the same everywhere.
      await lab.ip(node.name, 'link', 'add', 'docker0', 'type', 'veth', 'peer', 'name', 'vethd0c');
      for (const iface of ['docker0', 'vethd0c'])
        await lab.ip(node.name, 'link', 'set', iface, 'up');
      await lab.addr(node.name, 'docker0', '198.19.0.1/16');
    }
    const fleetHosts = `127.0.0.1 localhost\n${FLEET.map((name, i) => `${fleet(i)} ${name}`).join('\n')}\n`;
    for (const [i, name] of FLEET.entries()) {
      await host(name, fleetHosts);
      await plug(name, 'eth0', 'fleet', `${fleet(i)}/24`);
    }
  });

  afterAll(async () => {
    await lab.cleanup();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('agree: every node takes its own data NIC, the network all have and the fastest that counts, never the shared docker0', async () => {
    // Faked: data NICs 100 Gb/s, docker0 400 Gb/s (veths say 10 Gb/s, as eno1 keeps).
    const runs = await Promise.all(
      AGREE.map((node, rank) =>
        startCheck(lab, node.name, {
          hostname: node.name,
          speeds: { [node.data]: speedFile(100_000), docker0: speedFile(400_000) },
          args: [
            '--strategy',
            'explicit,local,agree,subnet,route,speed',
            // Without the default excludes docker0 is a candidate: the shared address must still rule it out.
            '--no-default-excludes',
            '--verify',
            'peers',
            '--verify-timeout',
            '15s',
            '--nnodes=3',
            `--node_rank=${rank}`,
            '--master_addr=gpu-a',
            '--master_port=29500',
            'train.py',
          ],
        }),
      ),
    );
    for (const [i, run] of runs.entries()) {
      const logs = run.logs.map((line) => line.msg);
      expect(run.code, logs.join('\n')).toBe(0);
      expect(run.report).toMatchObject({
        ok: true,
        level: 'peers',
        interface: AGREE[i]?.data,
        localAddress: data(i),
      });
      const probes = run.report?.results.filter((result) => result.check === 'probe') ?? [];
      expect(probes.map((result) => [result.peer, result.address, result.ok]).sort()).toEqual(
        AGREE.flatMap((other, j) => (j === i ? [] : [[other.name, data(j), true]])),
      );
      // The launch summary says what was chosen and why, as the trace does.
      expect(logs).toContainEqual(
        expect.stringContaining(
          `using ${AGREE[i]?.data} ${data(i)} (agree: 198.18.60.0/24 is common to all 3 nodes and wins`,
        ),
      );
    }
    expect(runs[1]?.logs.map((line) => line.msg).join('\n')).toMatch(
      /198\.18\.60\.0\/24 is common to all 3 nodes and wins \(its slowest node 100000 Mb\/s, 203\.0\.113\.0\/24's 10000 Mb\/s\); enp65s0 holds 198\.18\.60\.2 on it; common: 198\.18\.60\.0\/24 \(slowest 100000 Mb\/s\), 203\.0\.113\.0\/24 \(slowest 10000 Mb\/s\); 198\.19\.0\.0\/16 does not count: 198\.19\.0\.1 is held by more than one node/,
    );
  });

  it('16 nodes at once pass, none with a peer list', async () => {
    const runs = await Promise.all(
      FLEET.map((name, rank) =>
        startCheck(lab, name, {
          hostname: name,
          args: [
            '--iface',
            'eth0',
            '--verify',
            'peers',
            '--verify-timeout',
            '30s',
            '--nnodes=16',
            `--node_rank=${rank}`,
            '--master_addr=n00',
            '--master_port=29500',
            'train.py',
          ],
        }),
      ),
    );
    for (const [i, run] of runs.entries()) {
      expect(run.code, JSON.stringify(run.error)).toBe(0);
      const probes = run.report?.results.filter((result) => result.check === 'probe') ?? [];
      expect(probes).toHaveLength(15);
      expect(probes.every((result) => result.ok && result.seenSource === fleet(i))).toBe(true);
      const next = FLEET[(i + 1) % 16];
      expect(probes.find((result) => result.peer === next)?.bandwidthMbps).toBeGreaterThan(0);
    }
  });
});
