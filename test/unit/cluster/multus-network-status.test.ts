/**
 * The network-status file as kubelet writes it (kubernetes pkg/fieldpath
 * FormatMap: `key="value"` lines, %q-quoted, sorted by key), read from real
 * files; the wait re-reads a file another writer fills, as kubelet's refresh does.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  parseAnnotationFile,
  readNetworkStatus,
  unquoteGo,
} from '../../../src/cluster/multus-network-status.js';
import { ConfigError } from '../../../src/errors.js';

const STATUS = [
  { name: 'k8s-pod-network', interface: 'eth0', ips: ['10.244.5.17'], default: true, dns: {} },
  { name: 'default/roce', interface: 'net1', ips: ['198.18.40.17'], mac: '02:00:00:00:00:01' },
];
/** Go's %q for an ASCII string: JSON's string syntax is the same there. */
const goQuote = (value: string) => JSON.stringify(value);
/** The downward API's metadata.annotations file, as kubelet writes it. */
const annotationsFile = (extra: Record<string, string> = {}) =>
  Object.entries({
    'k8s.v1.cni.cncf.io/network-status': JSON.stringify(STATUS, null, 4),
    'k8s.v1.cni.cncf.io/networks': 'roce',
    'kubectl.kubernetes.io/default-container': 'pytorch',
    ...extra,
  })
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${goQuote(value)}`)
    .join('\n');

const dir = mkdtempSync(join(tmpdir(), 'network-status-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};

describe('the annotations file', () => {
  it('reads every annotation, unquoted, and the attached networks from the status', async () => {
    const file = write('all', annotationsFile());
    expect(parseAnnotationFile(annotationsFile(), file).get('k8s.v1.cni.cncf.io/networks')).toBe(
      'roce',
    );
    await expect(readNetworkStatus(file, { waitMs: 0 })).resolves.toEqual({
      file,
      kind: 'attached',
      networks: [
        { name: 'k8s-pod-network', interface: 'eth0', ips: ['10.244.5.17'], default: true },
        { name: 'default/roce', interface: 'net1', ips: ['198.18.40.17'], default: false },
      ],
    });
  });

  it('reads a file that is the status JSON alone (a volume item of the one annotation)', async () => {
    const file = write('one', `${JSON.stringify(STATUS)}\n`);
    await expect(readNetworkStatus(file, { waitMs: 0 })).resolves.toMatchObject({
      kind: 'attached',
      networks: [{ interface: 'eth0' }, { interface: 'net1' }],
    });
  });

  it("reads Multus 3.x's plural key where the singular is missing", async () => {
    const text = annotationsFile().replace('network-status=', 'networks-status=');
    await expect(readNetworkStatus(write('plural', text), { waitMs: 0 })).resolves.toMatchObject({
      kind: 'attached',
    });
  });

  it('says no networks were requested, without waiting, when the pod asks for none', async () => {
    const file = write('none', 'kubectl.kubernetes.io/default-container="pytorch"');
    await expect(readNetworkStatus(file, { waitMs: 60_000 })).resolves.toEqual({
      file,
      kind: 'none requested',
    });
  });

  it('waits while networks are requested and their status is not written, then reads it', async () => {
    const file = write('later', 'k8s.v1.cni.cncf.io/networks="roce"');
    const waited: (string | null)[] = [];
    const reading = readNetworkStatus(file, {
      waitMs: 30_000,
      pollMs: 20,
      onWait: (request) => {
        waited.push(request);
        // kubelet's refresh: the whole file, rewritten.
        setTimeout(() => writeFileSync(file, annotationsFile()), 50);
      },
    });
    await expect(reading).resolves.toMatchObject({ kind: 'attached' });
    expect(waited).toEqual(['roce']);
  });

  it('gives up at the end of the wait, with what the pod asked for', async () => {
    const file = write('never', 'k8s.v1.cni.cncf.io/networks="roce"');
    await expect(readNetworkStatus(file, { waitMs: 50, pollMs: 10 })).resolves.toMatchObject({
      kind: 'not written',
      request: 'roce',
    });
  });

  it.each([
    ['a missing file', null, /--network-status .*missing cannot be read \(ENOENT\)/],
    ['a line that is not key="value"', 'roce', /line 1 is not key="value"/],
    ['a status that is not JSON', 'k8s.v1.cni.cncf.io/network-status="[{"', /is not JSON/],
    [
      'a status that is not a list of named networks',
      `k8s.v1.cni.cncf.io/network-status=${goQuote('[{"interface":"net1"}]')}`,
      /is not a list of networks with a name \(0\.name:/,
    ],
  ])('refuses %s (78)', async (_, text, message) => {
    const file = text === null ? join(dir, 'missing') : write('bad', text);
    const reading = readNetworkStatus(file, { waitMs: 0 });
    await expect(reading).rejects.toThrow(ConfigError);
    await expect(readNetworkStatus(file, { waitMs: 0 })).rejects.toThrow(message);
  });
});

describe("Go's %q, unquoted", () => {
  it.each([
    ['\\"a\\"\\\\b', '"a"\\b'],
    ['\\n\\t\\a\\v', '\n\t\x07\v'],
    ['caf\\u00e9 \\U0001F600', 'café 😀'],
    ['\\xc3\\xa9 \\303\\251', 'é é'],
    ['plain', 'plain'],
  ])('%s', (body, text) => {
    expect(unquoteGo(body, 'f')).toBe(text);
  });

  it('refuses an escape Go does not write', () => {
    expect(() => unquoteGo('\\q', 'f')).toThrow(/bad escape '\\q'/);
  });
});
