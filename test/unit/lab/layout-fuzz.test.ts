/**
 * The fuzz's layouts (test/lab/layout-fuzz.ts): a seed names the same
 * layouts everywhere, and over a few hundred of them the vocabulary the
 * issue lists all appears, within the documentation ranges, without an
 * address used twice on one host.
 */
import { describe, expect, it } from 'vitest';
import { generateLayout } from '../../lab/layout-fuzz.js';

const many = Array.from({ length: 300 }, (_, index) => generateLayout(7, index));

describe('seeded layouts', () => {
  it('are the same for the same seed and index, and differ between seeds', () => {
    expect(generateLayout(7, 3)).toEqual(generateLayout(7, 3));
    expect(JSON.stringify(generateLayout(8, 3))).not.toBe(JSON.stringify(generateLayout(7, 3)));
  });

  it('draw every name family, state, address shape and master placement', () => {
    const nics = many.flatMap((layout) => layout.spec.nics);
    const names = nics.map((nic) => nic.name);
    for (const prefix of [
      'eth',
      'ens',
      'eno',
      'enp',
      'ib',
      'hsn',
      'bond',
      'docker0',
      'virbr0',
      'br-',
      'cni0',
      'lxcbr0',
      'veth',
      'cali',
      'tun0',
      'pod-id-link0',
    ]) {
      expect(
        names.some((name) => name.startsWith(prefix)),
        prefix,
      ).toBe(true);
    }
    expect(nics.some((nic) => nic.down === true)).toBe(true);
    expect(nics.some((nic) => nic.carrier === false && nic.kind === undefined)).toBe(true);
    expect(nics.some((nic) => nic.carrier === false && nic.kind === 'bridge')).toBe(true);
    expect(nics.some((nic) => nic.addresses === undefined)).toBe(true);
    const families = (nic: (typeof nics)[number]) =>
      (nic.addresses ?? []).map((cidr) => (cidr.includes(':') ? 6 : 4)).join('');
    for (const shape of ['4', '6', '46', '44', '66']) {
      expect(
        nics.some((nic) => families(nic) === shape),
        shape,
      ).toBe(true);
    }
    expect(new Set(many.map((layout) => layout.placement))).toEqual(
      new Set(['local', 'local-ipv6', 'routed', 'nowhere']),
    );
    const kept = many.flatMap((layout) => layout.kept);
    expect(kept.some((env) => env.NCCL_SOCKET_IFNAME === 'e')).toBe(true);
    expect(kept.some((env) => env.NCCL_SOCKET_FAMILY === 'AF_INET6')).toBe(true);
    expect(kept.some((env) => env.NCCL_COMM_ID?.startsWith('[2001:db8:'))).toBe(true);
  });

  it('use only the documentation and benchmarking ranges (and EKS link-local), each address once per host', () => {
    for (const layout of many) {
      const addresses = layout.spec.nics.flatMap((nic) => nic.addresses ?? []);
      for (const cidr of addresses) {
        expect(cidr).toMatch(
          /^(198\.18\.\d+\.\d+\/24|2001:db8:[0-9a-f]+::[0-9a-f]+\/64|169\.254\.170\.\d+\/32)$/,
        );
      }
      expect(new Set(addresses).size).toBe(addresses.length);
      expect(layout.master).toMatch(/^(198\.1[89]\.|2001:db8:)/);
    }
  });
});
