import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePortRangeFile, readPortRange } from '../../../src/host/port-range-file.js';

describe('parsePortRangeFile', () => {
  it.each([
    ['32768\t60999\n', [32_768, 60_999]],
    ['50000 51000', [50_000, 51_000]],
    ['1024 1024\n', [1024, 1024]],
  ])('%j', (text, range) => {
    expect(parsePortRangeFile(text)).toEqual(range);
  });

  it.each(['', '60999 32768', '0 10', '50000 70000', 'a b', '50000'])('%j: null', (text) => {
    expect(parsePortRangeFile(text)).toBeNull();
  });
});

describe('readPortRange', () => {
  const root = mkdtempSync(join(tmpdir(), 'tpl-proc-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads <procRoot>/sys/net/ipv4/ip_local_port_range; null where it is missing', () => {
    expect(readPortRange(root)).toBeNull();
    mkdirSync(join(root, 'sys/net/ipv4'), { recursive: true });
    writeFileSync(join(root, 'sys/net/ipv4/ip_local_port_range'), '40000\t40999\n');
    expect(readPortRange(root)).toEqual([40_000, 40_999]);
  });
});

describe('a --facts snapshot', () => {
  it('carries the range when taken by this version, and is still read without it', async () => {
    const { hostFactsSchema } = await import('../../../src/host/facts-schema.js');
    const { portRangeText } = await import('../../../src/cli/render.js');
    const base = { hostname: 'node01', interfaces: [], routes: [] };
    const taken = hostFactsSchema.parse({ ...base, portRange: [50_000, 51_000] });
    expect(portRangeText(taken)).toMatch(/^ephemeral ports 50000-51000 \(/);
    const older = hostFactsSchema.parse(base);
    expect(portRangeText(older)).toBe(
      'ephemeral ports: net.ipv4.ip_local_port_range unknown (unreadable here, or not in the --facts snapshot)',
    );
    expect(() => hostFactsSchema.parse({ ...base, portRange: [0, 70_000] })).toThrow();
  });
});
