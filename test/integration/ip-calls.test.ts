/**
 * Which `ip` processes a command starts: `ip -d addr show` adds what only
 * explain shows (down links' addresses, virtual kinds), so no other command
 * pays for its spawn. An `ip` shim first on PATH records each call and runs
 * the real one.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';

const dir = mkdtempSync(join(tmpdir(), 'ncr-ip-calls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function ipCalls(args: string[]): Promise<string[]> {
  const log = join(dir, `${args[0]}.log`);
  const realIp = (await execa('sh', ['-c', 'command -v ip'])).stdout;
  writeFileSync(join(dir, 'ip'), `#!/bin/sh\necho "$*" >> ${log}\nexec ${realIp} "$@"\n`);
  chmodSync(join(dir, 'ip'), 0o755);
  writeFileSync(log, '');
  await execa(BIN, [...args, '--iface', 'lo', '--verify', 'none', 'train.py'], {
    env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
  });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

describe('ip processes per command', () => {
  it.each([['env'], ['check'], ['--dry-run']])('%s runs no ip -d addr show', async (command) => {
    expect(await ipCalls([command])).not.toContainEqual(expect.stringContaining('addr'));
  });

  it('explain runs ip -d addr show for the table', async () => {
    expect(await ipCalls(['explain'])).toContainEqual(expect.stringMatching(/-d .*addr/));
  });
});
