/**
 * Which `ip` processes a command starts: `ip -d addr show` adds down links'
 * addresses and virtual kinds, which explain shows and NCCL's own pick may
 * walk; no other command pays for its spawn. An `ip` shim first on PATH
 * records each call and runs the real one.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';

const dir = mkdtempSync(join(tmpdir(), 'ncr-ip-calls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function ipCalls(args: string[], env: Record<string, string> = {}): Promise<string[]> {
  const log = join(dir, `${args[0]}.log`);
  const realIp = (await execa('sh', ['-c', 'command -v ip'])).stdout;
  writeFileSync(join(dir, 'ip'), `#!/bin/sh\necho "$*" >> ${log}\nexec ${realIp} "$@"\n`);
  chmodSync(join(dir, 'ip'), 0o755);
  writeFileSync(log, '');
  await execa(BIN, [...args, '--iface', 'lo', '--verify', 'none', 'train.py'], {
    env: { ...process.env, ...env, PATH: `${dir}:${process.env.PATH}` },
  });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

describe('ip processes per command', () => {
  it.each([['env'], ['check'], ['--dry-run']])('%s runs no ip -d addr show', async (command) => {
    expect(await ipCalls([command])).not.toContainEqual(expect.stringContaining('addr'));
  });

  // NCCL 2.19-2.27 takes addresses of links that are down, which
  // os.networkInterfaces() leaves out; NCCL_COMM_ID's subnet match never asks.
  it.each([
    [
      'a kept NCCL_SOCKET_IFNAME under NCCL 2.22',
      { NCCL_SOCKET_IFNAME: 'lo', NCCL_VERSION: '2.22.3' },
    ],
    ['NCCL_COMM_ID', { NCCL_COMM_ID: '127.0.0.1:29600' }],
  ])('env runs ip -d addr show for %s: NCCL walks down links there', async (_why, env) => {
    expect(await ipCalls(['env'], env)).toContainEqual(expect.stringMatching(/-d .*addr/));
  });

  it('env runs no ip -d addr show for a kept NCCL_SOCKET_IFNAME under 2.28, which skips down links', async () => {
    const env = { NCCL_SOCKET_IFNAME: 'lo', NCCL_VERSION: '2.28.3' };
    expect(await ipCalls(['env'], env)).not.toContainEqual(expect.stringContaining('addr'));
  });

  it('explain runs ip -d addr show for the table', async () => {
    expect(await ipCalls(['explain'])).toContainEqual(expect.stringMatching(/-d .*addr/));
  });
});
