/**
 * The ld.so.cache reader (src/host/ld-so-cache.ts) over caches written here
 * in glibc's layout (sysdeps/generic/dl-cache.h): the new format alone and
 * after the old table, entries for another architecture and for a
 * glibc-hwcaps subfolder passed over. The real caches of the lab roots are
 * read by the loader tier (test/e2e/net-plugin-loader.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseLdSoCache } from '../../../src/host/ld-so-cache.js';

interface Entry {
  flags: number;
  name: string;
  path: string;
  hwcap?: bigint;
}

/** The new format: header, entries, then the strings; offsets from the header's start. */
function newFormat(entries: Entry[]): Buffer {
  const header = Buffer.alloc(48);
  header.write('glibc-ld.so.cache1.1', 0, 'latin1');
  header.writeUInt32LE(entries.length, 20);
  const table = Buffer.alloc(24 * entries.length);
  const strings: Buffer[] = [];
  let offset = 48 + table.length;
  const text = (value: string) => {
    const at = offset;
    const bytes = Buffer.from(`${value}\0`);
    strings.push(bytes);
    offset += bytes.length;
    return at;
  };
  entries.forEach((entry, i) => {
    table.writeInt32LE(entry.flags, 24 * i);
    table.writeUInt32LE(text(entry.name), 24 * i + 4);
    table.writeUInt32LE(text(entry.path), 24 * i + 8);
    table.writeBigUInt64LE(entry.hwcap ?? 0n, 24 * i + 16);
  });
  header.writeUInt32LE(offset - 48 - table.length, 24);
  return Buffer.concat([header, table, ...strings]);
}

const X86_64 = 0x0303;
const ENTRIES: Entry[] = [
  { flags: 0x0003, name: 'libnccl-net.so', path: '/usr/lib/i386-linux-gnu/libnccl-net.so' },
  {
    flags: X86_64,
    name: 'libnccl-net.so',
    path: '/opt/amazon/ofi-nccl/lib/libnccl-net.so',
    hwcap: 1n << 62n,
  },
  { flags: X86_64, name: 'libnccl-net.so', path: '/opt/amazon/ofi-nccl/lib/libnccl-net.so.x' },
  { flags: X86_64, name: 'libnccl-net.so', path: '/second/libnccl-net.so' },
  { flags: 0x0a03, name: 'libfoo.so', path: '/usr/lib/aarch64-linux-gnu/libfoo.so' },
];

describe('parseLdSoCache', () => {
  it('takes the first entry of this machine, without hwcaps', () => {
    const cache = parseLdSoCache(newFormat(ENTRIES), 'x64');
    expect(cache.get('libnccl-net.so')).toBe('/opt/amazon/ofi-nccl/lib/libnccl-net.so.x');
    expect(cache.has('libfoo.so')).toBe(false);
    expect(parseLdSoCache(newFormat(ENTRIES), 'arm64').get('libfoo.so')).toBe(
      '/usr/lib/aarch64-linux-gnu/libfoo.so',
    );
  });

  it('finds the new format after the old table', () => {
    const old = Buffer.alloc(16 + 12 * 2);
    old.write('ld.so-1.7.0', 0, 'latin1');
    old.writeUInt32LE(2, 12);
    const cache = parseLdSoCache(Buffer.concat([old, newFormat(ENTRIES)]), 'x64');
    expect(cache.size).toBe(1);
  });

  it('reads nothing from what is no cache', () => {
    expect(parseLdSoCache(Buffer.from('not a cache'), 'x64').size).toBe(0);
  });
});
