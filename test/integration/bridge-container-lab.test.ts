/**
 * SPEC "Causes users meet": a container on a bridge network in a multi-node
 * job whose master is not on that network, on a real kernel. The "host"
 * namespace holds the bridge br0 (198.18.30.1/24, Docker's docker0 or
 * podman's podman0 in miniature) and MASQUERADEs what leaves it (iptables
 * in that namespace, as dockerd and netavark add it); the "container"
 * namespace's only interface eth0 is a veth on that bridge, its default
 * route the bridge's gateway; the master is a third namespace on the host's
 * uplink, not on the bridge. The container fact comes from an engine's
 * marker file (src/host/read-host-facts.ts containerEngine): a tmpfs over
 * /run holding /run/.containerenv, in the container's own private mount
 * namespace only, never on the machine.
 *
 * This machine is itself a Docker container (its /.dockerenv is seen from
 * every namespace), so the engine named is `docker` here and `podman` where
 * the machine has no /.dockerenv; a host without any marker cannot be made
 * here, which test/unit/env/bridge-container.test.ts covers on facts.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import { startCheck } from './check-on-node.js';

const MARKER = 'mount -t tmpfs dq-run /run && touch /run/.containerenv';
const ENGINE = existsSync('/.dockerenv') ? 'docker' : 'podman';
const HOSTS = '127.0.0.1 localhost\n198.18.40.1 dq-master\n';

tier('a bridge-networked container on a real kernel', netnsUnavailable, () => {
  const lab = new Lab('dqbr');
  afterAll(() => lab.cleanup());

  beforeAll(async () => {
    for (const host of ['host', 'ctr', 'mst']) {
      await lab.host(host, HOSTS);
      // Files first, no DNS server to wait for.
      writeFileSync(`/etc/netns/${lab.ns(host)}/nsswitch.conf`, 'hosts: files\n');
    }
    await lab.ip('host', 'link', 'add', 'br0', 'type', 'bridge');
    await lab.ip('host', 'link', 'set', 'br0', 'up');
    await lab.addr('host', 'br0', '198.18.30.1/24');
    await lab.link('ctr', 'eth0', 'host', 'vethc0');
    await lab.ip('host', 'link', 'set', 'vethc0', 'master', 'br0');
    await lab.addr('ctr', 'eth0', '198.18.30.2/24');
    await lab.ip('ctr', 'route', 'add', 'default', 'via', '198.18.30.1');
    await lab.link('host', 'eth0', 'mst', 'eth0');
    await lab.addr('host', 'eth0', '198.18.40.2/24');
    await lab.addr('mst', 'eth0', '198.18.40.1/24');
    // The master knows no route to 198.18.30.0/24: only the NAT brings the container's traffic back.
    await lab.exec('host', 'sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
    await lab.exec('host', 'iptables', [
      ...['-t', 'nat', '-A', 'POSTROUTING', '-s', '198.18.30.0/24', '!', '-o', 'br0'],
      ...['-j', 'MASQUERADE'],
    ]);
  });

  const job = (rank: number) => [
    ...['--nnodes=2', `--node_rank=${rank}`, '--master_addr=198.18.40.1', '--master_port=29500'],
    'train.py',
  ];
  const warning = new RegExp(
    `^this node is a ${ENGINE} container on the bridge network 198\\.18\\.30\\.0/24: eth0 198\\.18\\.30\\.2 reaches the master 198\\.18\\.40\\.1 only through the bridge's gateway 198\\.18\\.30\\.1, behind NAT, .*run the container with --network host`,
  );

  it('check names the bridge network and --network host; the mesh of --verify peers cannot dial the container: 75', async () => {
    const args = (rank: number) => ['--verify', 'peers', '--verify-timeout', '4s', ...job(rank)];
    const [container, master] = await Promise.all([
      startCheck(lab, 'ctr', { hostname: 'dq-ctr', prelude: MARKER, args: args(1) }),
      startCheck(lab, 'mst', { hostname: 'dq-master', args: args(0) }),
    ]);
    const warned = container.logs.filter((line) => line.level === 40 && warning.test(line.msg));
    expect(warned, container.logs.map((line) => line.msg).join('\n')).toHaveLength(1);
    expect(container.code, container.logs.map((line) => line.msg).join('\n')).toBe(75);
    expect(master.code, master.logs.map((line) => line.msg).join('\n')).toBe(75);
    // For the reason the warning gives: the master saw the NAT's address and could not dial back.
    expect(container.error?.message).toMatch(
      /registered from 198\.18\.40\.2 claiming 198\.18\.30\.2:\d+, which the master cannot reach to prove it \(unreachable, ENETUNREACH\)/,
    );
    expect(master.error?.message).toMatch(/rank 1 never registered/);
    // The master, on the uplink, is no container on a bridge: no such warning.
    expect(master.logs.filter((line) => warning.test(line.msg))).toEqual([]);
    // The marker lived in the container's mount namespace only.
    expect(existsSync('/run/.containerenv')).toBe(false);
  });

  it("check --verify local passes there and still warns: the warning is the plan's, not a failed dial", async () => {
    const run = await startCheck(lab, 'ctr', {
      hostname: 'dq-ctr',
      prelude: MARKER,
      args: ['--verify', 'local', ...job(1)],
    });
    expect(run.code, run.logs.map((line) => line.msg).join('\n')).toBe(0);
    expect(run.report?.warnings ?? []).toEqual([expect.stringMatching(warning)]);
  });
});
