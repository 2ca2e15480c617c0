/**
 * routeTo(live) decides between the kernel's "no route" and an `ip` that
 * cannot answer, with fixture `ip` scripts on PATH (real processes): the
 * first gives no answer, the second falls back to /proc.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HostFacts } from '../../../src/host/host-facts.js';
import { routeTo } from '../../../src/host/routes.js';
import { buildSysfsTree, osInterfaces, readFixture } from '../../fixtures/sysfs-tree.js';

let dir: string;
const originalPath = process.env.PATH;

/** Puts a fake `ip` first on PATH: a shell script body. */
function fakeIp(name: string, body: string): void {
  const bin = join(dir, name);
  mkdirSync(bin);
  writeFileSync(join(bin, 'ip'), `#!/bin/sh\n${body}\n`);
  chmodSync(join(bin, 'ip'), 0o755);
  process.env.PATH = `${bin}:${originalPath}`;
}

const facts: HostFacts = {
  hostname: 'h',
  interfaces: [
    {
      name: 'eth0',
      operstate: 'up',
      carrier: true,
      addresses: [{ address: '198.18.10.5', family: 'ipv4', prefixLength: 24, scope: 'global' }],
      speedMbps: null,
      mtu: 1500,
      kind: 'physical',
      master: null,
      rdma: null,
    },
  ],
  routes: [],
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ncr-fake-ip-'));
  mkdirSync(join(dir, 'proc/net'), { recursive: true });
  writeFileSync(
    join(dir, 'proc/net/route'),
    'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n' +
      'eth0\t000A12C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n',
  );
});

afterEach(() => {
  process.env.PATH = originalPath;
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('routeTo, live, when ip answers badly', () => {
  it('takes the kernel\'s "RTNETLINK answers" as no route, without falling back', async () => {
    fakeIp('unreachable', 'echo "RTNETLINK answers: Network is unreachable" >&2; exit 2');
    const answers = await routeTo(['198.18.10.9'], facts, true, { procRoot: join(dir, 'proc') });
    expect(answers).toEqual([]);
  });

  it('falls back to /proc when ip itself fails (BusyBox ip has no -j)', async () => {
    fakeIp('busybox', `echo "ip: invalid option -- 'j'" >&2; exit 1`);
    const answers = await routeTo(['198.18.10.9'], facts, true, { procRoot: join(dir, 'proc') });
    expect(answers).toEqual([
      {
        destination: '198.18.10.9',
        interface: 'eth0',
        source: '198.18.10.5',
        gateway: null,
        type: 'unicast',
      },
    ]);
  });

  it('falls back to /proc when ip prints something that is not JSON', async () => {
    fakeIp('garbled', 'echo "198.18.10.9 dev eth0 src 198.18.10.5"');
    const answers = await routeTo(['198.18.10.9'], facts, true, { procRoot: join(dir, 'proc') });
    expect(answers.map((answer) => answer.interface)).toEqual(['eth0']);
  });

  it('uses what ip -j route get says when it answers', async () => {
    fakeIp(
      'answers',
      `echo '[{"dst":"198.18.10.9","gateway":"198.18.10.1","dev":"eth7","prefsrc":"198.18.10.5","flags":[],"uid":0,"cache":[]}]'`,
    );
    const answers = await routeTo(['198.18.10.9'], facts, true, { procRoot: join(dir, 'proc') });
    expect(answers).toEqual([
      {
        destination: '198.18.10.9',
        interface: 'eth7',
        source: '198.18.10.5',
        gateway: '198.18.10.1',
        type: 'unicast',
      },
    ]);
  });
});

describe('routeTo over the fixture /proc (live, without iproute2)', () => {
  let root: string;
  beforeAll(() => {
    root = buildSysfsTree();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("matches the longest prefix, answers this host's addresses as local, and leaves out the unroutable", async () => {
    const facts = await readFixture(osInterfaces);
    const answers = await routeTo(
      ['198.18.10.9', '192.0.2.1', '198.18.10.5', '2001:db8::1'],
      facts,
      true,
      {
        ip: false,
        procRoot: join(root, 'proc'),
      },
    );
    expect(answers).toEqual([
      {
        destination: '198.18.10.9',
        interface: 'eth0',
        source: '198.18.10.5',
        gateway: null,
        type: 'unicast',
      },
      {
        destination: '192.0.2.1',
        interface: 'bond0',
        source: '203.0.113.5',
        gateway: '203.0.113.1',
        type: 'unicast',
      },
      {
        destination: '198.18.10.5',
        interface: 'eth0',
        source: '198.18.10.5',
        gateway: null,
        type: 'local',
      },
    ]);
  });
});
