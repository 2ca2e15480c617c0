/**
 * SPEC "Outputs": everything written to stdout arrives whole, also through a
 * slow pipe. The reader here starts late, on a pipe whose write end is
 * non-blocking, where Node queues what the pipe cannot take yet and an
 * early process.exit dropped all past the first 64 KiB.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture } from '../fixtures/fixture-report.js';
import { BIN } from '../fixtures/nccl-run-process.js';

const dir = mkdtempSync(join(tmpdir(), 'ncr-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function slowlyRead(args: string[]): Promise<{ bytes: number; status: number; out: string }> {
  const outFile = join(dir, 'out');
  const { stdout } = await execa('/usr/bin/python3', [fixture('slow-reader.py'), BIN, ...args], {
    env: { ...process.env, SLOW_READER_OUT: outFile },
  });
  return { ...JSON.parse(stdout), out: readFileSync(outFile, 'utf8') };
}

/** A Kubernetes node with 4,000 interfaces: k8s-node-1000.json with each veth four times. */
function bigHostFacts(): string {
  const facts = JSON.parse(readFileSync(fixture('facts/k8s-node-1000.json'), 'utf8'));
  const veths = facts.interfaces.filter((i: { kind: string }) => i.kind === 'veth');
  for (const copy of [1, 2, 3]) {
    for (const veth of veths) facts.interfaces.push({ ...veth, name: `${veth.name}x${copy}` });
  }
  const file = join(dir, 'big-host.json');
  writeFileSync(file, JSON.stringify(facts));
  return file;
}

describe('output through a slow pipe', () => {
  it('a 1 MB explain --json arrives whole', async () => {
    const facts = bigHostFacts();
    const { bytes, status, out } = await slowlyRead([
      ...['explain', '--json', '--verify', 'none', '--facts', facts],
      ...['--nnodes=2', '--master_addr=10.0.0.1', 'train.py'],
    ]);
    expect(status).toBe(0);
    expect(bytes).toBeGreaterThan(1_000_000);
    expect(JSON.parse(out).interfaces.length).toBeGreaterThan(3_900);
  });

  it('--dry-run with a 1 MB argv prints all of the command', async () => {
    const words = Array.from({ length: 20 }, (_, i) => `${i}:${'x'.repeat(50_000)}`);
    const { status, out } = await slowlyRead([
      ...['--dry-run', '--iface', 'lo', '--verify', 'none', '--log-level', 'silent'],
      'train.py',
      ...words,
    ]);
    expect(status).toBe(0);
    expect(out.trimEnd().endsWith(words.at(-1) as string)).toBe(true);
    expect(out.length).toBeGreaterThan(1_000_000);
  });
});
