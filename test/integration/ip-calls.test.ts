/**
 * When `ip -d addr show` runs (issue 19 item 1, SPEC "The stack"): the host
 * decides, never the command. On a host whose links are all up and running,
 * Node's list has every address and no command spawns it, explain included,
 * nor on one whose down link holds no address (/proc says so); on a host
 * with a down link that holds an address (which Node's list omits), every
 * command reads it, so all four decide on the same facts. No command asks
 * `ip route get` for the loopback master of a single-node job. An `ip` shim
 * first on PATH records each call and runs the real one.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const COMMANDS = [['explain'], ['env'], ['check'], ['--dry-run']];

tier('ip processes per host, the same for every command', netnsUnavailable, () => {
  const lab = new Lab('ipc');
  const dir = mkdtempSync(join(tmpdir(), 'ncr-ip-calls-'));

  beforeAll(async () => {
    await lab.host('wire');
    await lab.host('allup');
    await lab.link('allup', 'data0', 'wire', 'w0');
    await lab.addr('allup', 'data0', '198.18.210.2/24');
    await lab.host('down');
    await lab.link('down', 'data0', 'wire', 'w1');
    await lab.addr('down', 'data0', '198.18.211.2/24');
    await lab.link('down', 'mgmt0', 'wire', 'w2');
    await lab.addr('down', 'mgmt0', '203.0.113.2/24');
    await lab.ip('down', 'link', 'set', 'data0', 'down');
    // A spare link, down and holding nothing: an ifb, an unplugged NIC.
    await lab.host('spare');
    await lab.link('spare', 'data0', 'wire', 'w3');
    await lab.addr('spare', 'data0', '198.18.212.2/24');
    await lab.link('spare', 'spare0', 'wire', 'w4');
    await lab.ip('spare', 'link', 'set', 'spare0', 'down');
  });

  afterAll(async () => {
    await lab.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  async function ipCalls(host: string, args: string[]): Promise<string[]> {
    const shims = join(dir, `${host}-${args[0]}`);
    const log = `${shims}.log`;
    const realIp = (await execa('sh', ['-c', 'command -v ip'])).stdout;
    await execa('mkdir', ['-p', shims]);
    writeFileSync(join(shims, 'ip'), `#!/bin/sh\necho "$*" >> ${log}\nexec ${realIp} "$@"\n`);
    chmodSync(join(shims, 'ip'), 0o755);
    writeFileSync(log, '');
    await lab.exec(host, '/usr/bin/env', [
      `PATH=${shims}:${process.env.PATH}`,
      BIN,
      ...args,
      '--iface',
      'lo',
      '--verify',
      'none',
      'train.py',
    ]);
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  }

  it.each(COMMANDS)('%s runs no ip -d addr show where every link is up', async (command) => {
    expect(await ipCalls('allup', [command])).not.toContainEqual(expect.stringContaining('addr'));
  });

  it.each(COMMANDS)(
    '%s runs no ip at all where the down link holds no address',
    async (command) => {
      expect(await ipCalls('spare', [command])).toEqual([]);
    },
  );

  it.each(COMMANDS)(
    '%s runs ip -d addr show where a down link holds addresses Node cannot list',
    async (command) => {
      expect(await ipCalls('down', [command])).toContainEqual(expect.stringMatching(/-d .*addr/));
    },
  );
});
