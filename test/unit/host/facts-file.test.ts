import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { hostFactsSchema, readFactsFile } from '../../../src/host/facts-file.js';
import type { HostFacts } from '../../../src/host/host-facts.js';

const facts: HostFacts = {
  hostname: 'node01',
  interfaces: [
    {
      name: 'ens3f0',
      operstate: 'up',
      carrier: true,
      addresses: [
        { address: '198.18.10.5', family: 'ipv4', prefixLength: 24, scope: 'global' },
        { address: '2001:db8:10::5', family: 'ipv6', prefixLength: 64, scope: 'global' },
      ],
      speedMbps: 100000,
      mtu: 9000,
      kind: 'physical',
      master: null,
      rdma: { device: 'mlx5_0', port: 1, state: 'ACTIVE' },
    },
    {
      name: 'eth1',
      operstate: 'down',
      carrier: null,
      addresses: [],
      speedMbps: null,
      mtu: null,
      kind: 'bond-member',
      master: 'bond0',
      rdma: null,
    },
  ],
  routes: [
    {
      family: 'ipv4',
      destination: '198.18.10.0',
      prefixLength: 24,
      interface: 'ens3f0',
      gateway: null,
      metric: 0,
      type: 'unicast',
    },
    {
      family: 'ipv6',
      destination: '::',
      prefixLength: 0,
      interface: 'ens3f0',
      gateway: '2001:db8:10::1',
      metric: 1024,
      type: 'unicast',
    },
  ],
};

let dir: string;
let count = 0;

function write(content: unknown): string {
  count += 1;
  const path = join(dir, `facts-${count}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** The one-line message of the ConfigError that reading `content` throws. */
function failure(content: unknown): string {
  const path = write(content);
  try {
    readFactsFile(path);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(path, 'FILE');
  }
  throw new Error('readFactsFile accepted a bad file');
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ncr-facts-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('readFactsFile', () => {
  it('reads a bare HostFacts as is', () => {
    expect(readFactsFile(write(facts))).toEqual(facts);
  });

  it('reads the facts out of explain --json, ignoring everything else', () => {
    const explained = {
      ...facts,
      interfaces: facts.interfaces.map((iface) => ({ ...iface, verdict: 'usable' })),
      master: { host: 'node00', addresses: ['198.18.10.1'], port: 29500, source: 'argv' },
      decision: {
        interface: 'ens3f0',
        address: '198.18.10.5',
        family: 'ipv4',
        strategy: 'subnet',
        reason: 'x',
      },
      trace: [],
      env: {},
      kept: {},
      warnings: [],
      command: ['torchrun'],
    };
    expect(readFactsFile(write(explained))).toEqual(facts);
  });

  it("reads NCCL's files and the net plugin as the snapshot's host found them; absent stays absent", () => {
    const recorded: HostFacts = {
      ...facts,
      ncclConf: [{ file: '/etc/nccl.conf', text: 'NCCL_SOCKET_IFNAME=ens3f0\n' }],
      netPlugin: {
        name: 'libnccl-net.so',
        path: '/opt/amazon/ofi-nccl/lib/libnccl-net.so',
        via: 'LD_LIBRARY_PATH',
        realPath: '/opt/amazon/ofi-nccl/lib/libnccl-net.so',
        kind: 'aws-ofi-nccl',
        version: '1.13.2',
      },
    };
    expect(readFactsFile(write(recorded))).toEqual(recorded);
    expect(readFactsFile(write({ ...facts, netPlugin: null }))).toEqual({
      ...facts,
      netPlugin: null,
    });
    expect(readFactsFile(write(facts))).not.toHaveProperty('ncclConf');
    expect(() => readFactsFile(write({ ...recorded, netPlugin: { name: 'x' } }))).toThrow(
      /netPlugin\.path is missing/,
    );
  });

  it('takes the hostname from a top-level host, and defaults a missing hostname and routes', () => {
    expect(readFactsFile(write({ host: 'node07', interfaces: facts.interfaces }))).toEqual({
      hostname: 'node07',
      interfaces: facts.interfaces,
      routes: [],
    });
    expect(readFactsFile(write({ interfaces: [] }))).toEqual({
      hostname: '',
      interfaces: [],
      routes: [],
    });
  });

  it('names the file and the reason when it cannot be read or parsed', () => {
    expect(() => readFactsFile(join(dir, 'missing.json'))).toThrow(ConfigError);
    expect(() => readFactsFile(join(dir, 'missing.json'))).toThrow(
      /facts file .*missing\.json cannot be read: ENOENT/,
    );
    expect(failure('{"interfaces": [')).toMatch(/^facts file FILE is not JSON: /);
  });

  it.each<[string, (copy: Record<string, unknown>) => unknown, string]>([
    [
      'no interfaces',
      () => ({ hostname: 'x' }),
      'facts file FILE: interfaces is missing (Invalid input: expected array, received undefined)',
    ],
    [
      'not an object',
      () => [1, 2],
      'facts file FILE: the top level is [1,2]: Invalid input: expected object, received array',
    ],
    [
      'an unknown kind',
      (copy) => ({ ...copy, interfaces: [{ ...facts.interfaces[0], kind: 'wifi' }] }),
      'facts file FILE: interfaces[0].kind is "wifi": Invalid option: expected one of "loopback"|"physical"|"bond"|"bond-member"|"bridge"|"veth"|"vlan"|"macvlan"|"tunnel"|"infiniband"|"other-virtual"',
    ],
    [
      'a missing field',
      (copy) => ({ ...copy, interfaces: [{ ...facts.interfaces[0], mtu: undefined }] }),
      'facts file FILE: interfaces[0].mtu is missing (Invalid input: expected number, received undefined)',
    ],
    [
      'an IPv4 prefix over 32',
      (copy) => ({
        ...copy,
        interfaces: [
          {
            ...facts.interfaces[0],
            addresses: [
              { address: '198.18.10.5', family: 'ipv4', prefixLength: 33, scope: 'global' },
            ],
          },
        ],
      }),
      'facts file FILE: interfaces[0].addresses[0].prefixLength is 33: expected 0-32 for ipv4',
    ],
    [
      'an address of the wrong family',
      (copy) => ({
        ...copy,
        interfaces: [
          {
            ...facts.interfaces[0],
            addresses: [
              { address: '198.18.10.5', family: 'ipv6', prefixLength: 64, scope: 'global' },
            ],
          },
        ],
      }),
      'facts file FILE: interfaces[0].addresses[0].address is "198.18.10.5": expected an IPv6 address (family is ipv6)',
    ],
    [
      'a route gateway that is no address',
      (copy) => ({ ...copy, routes: [{ ...facts.routes[0], gateway: 'router' }] }),
      'facts file FILE: routes[0].gateway is "router": expected an IP address or null',
    ],
  ])('rejects %s, naming the first bad field', (_name, mutate, message) => {
    expect(failure(mutate({ ...facts }))).toBe(message);
  });
});

describe('hostFactsSchema', () => {
  it('requires all three keys of a bare HostFacts', () => {
    expect(hostFactsSchema.safeParse(facts).success).toBe(true);
    expect(hostFactsSchema.safeParse({ interfaces: [] }).success).toBe(false);
  });
});
