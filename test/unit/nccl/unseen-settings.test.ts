/**
 * What NCCL may read that nccl-run cannot see (src/nccl/unseen-settings.ts):
 * its env plugin from 2.28.7 (a libnccl-env.so dlopen finds, or
 * NCCL_ENV_PLUGIN), and a bootstrap moved off sockets (NCCL_OOB_NET_ENABLE).
 * File trees made for each case; the wheel's layout as in read-stack.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NcclLibrary } from '../../../src/nccl/find-nccl.js';
import { findEnvPlugin, unseenNcclSettings } from '../../../src/nccl/unseen-settings.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

function tree(files: string[]): string {
  root = mkdtempSync(join(tmpdir(), 'unseen-'));
  for (const file of files) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), 'ELF');
  }
  return root;
}

const wheel = '/venv/lib/python3.12/site-packages/nvidia/nccl/lib';
const nccl = (version: string | null): NcclLibrary => ({
  version,
  source: 'test',
  library: `${wheel}/libnccl.so.2`,
});

describe('findEnvPlugin', () => {
  it('beside the NCCL that loads, then on the library path; only from 2.28.7', () => {
    tree([`${wheel}/libnccl.so.2`, `${wheel}/libnccl-env.so`, '/opt/env/libnccl-env.so']);
    expect(findEnvPlugin(nccl('2.29.7'), {}, root)).toBe(`${wheel}/libnccl-env.so`);
    rmSync(join(root, wheel, 'libnccl-env.so'));
    expect(findEnvPlugin(nccl('2.29.7'), { LD_LIBRARY_PATH: '/opt/env' }, root)).toBe(
      '/opt/env/libnccl-env.so',
    );
    expect(findEnvPlugin(nccl(null), { LD_LIBRARY_PATH: '/opt/env' }, root)).not.toBeNull();
    expect(findEnvPlugin(nccl('2.28.3'), { LD_LIBRARY_PATH: '/opt/env' }, root)).toBeNull();
    expect(findEnvPlugin(nccl('2.22.3'), { LD_LIBRARY_PATH: '/opt/env' }, root)).toBeNull();
    expect(findEnvPlugin(nccl('2.29.7'), {}, root)).toBeNull();
  });
});

describe('unseenNcclSettings', () => {
  it('names the env plugin found, or the one NCCL_ENV_PLUGIN names', () => {
    expect(unseenNcclSettings(nccl('2.29.7'), '/opt/env/libnccl-env.so', {})).toEqual([
      '/opt/env/libnccl-env.so: NCCL 2.29.7 loads this env plugin, which can set its variables (NCCL_SOCKET_IFNAME too) where nccl-run cannot see them',
    ]);
    expect(unseenNcclSettings(nccl('2.29.7'), null, { NCCL_ENV_PLUGIN: 'site' })).toEqual([
      'NCCL_ENV_PLUGIN=site: NCCL 2.29.7 loads that env plugin, which can set its variables (NCCL_SOCKET_IFNAME too) where nccl-run cannot see them',
    ]);
    expect(unseenNcclSettings(nccl('2.22.3'), null, { NCCL_ENV_PLUGIN: 'site' })).toEqual([]);
    expect(
      unseenNcclSettings(nccl('2.29.7'), '/x/libnccl-env.so', { NCCL_ENV_PLUGIN: 'none' }),
    ).toEqual([]);
  });

  it('says the bootstrap leaves sockets with NCCL_OOB_NET_ENABLE=1', () => {
    const env = { NCCL_OOB_NET_ENABLE: '1', NCCL_OOB_NET_IFNAME: 'mlx5_0' };
    expect(unseenNcclSettings(nccl('2.29.7'), null, env)).toEqual([
      "NCCL_OOB_NET_ENABLE=1: NCCL's bootstrap goes over its network plugin on NCCL_OOB_NET_IFNAME=mlx5_0, not the socket interface nccl-run models",
    ]);
    expect(unseenNcclSettings(nccl('2.29.7'), null, { NCCL_OOB_NET_ENABLE: '0' })).toEqual([]);
  });

  it('only where the release reads NCCL_OOB_NET_ENABLE (v2.23.4-1 on; unknown: may)', () => {
    const env = { NCCL_OOB_NET_ENABLE: '1' };
    const line =
      "NCCL_OOB_NET_ENABLE=1: NCCL's bootstrap goes over its network plugin, not the socket interface nccl-run models";
    expect(unseenNcclSettings(nccl('2.22.3'), null, env)).toEqual([]);
    expect(unseenNcclSettings(nccl('2.23.4'), null, env)).toEqual([line]);
    expect(unseenNcclSettings(nccl(null), null, env)).toEqual([line]);
  });
});

describe('a release older than the oldest modelled', () => {
  it('is named as such, its picture uncertain; the oldest modelled and newer are not', () => {
    const lib = (version: string | null) => ({ version, source: 'libnccl.so.2', library: null });
    expect(unseenNcclSettings(lib('2.7.8'), null, {})).toEqual([
      expect.stringMatching(
        /^NCCL 2\.7\.8 is older than 2\.18\.1, the oldest release nccl-run models: .*uncertain/,
      ),
    ]);
    expect(unseenNcclSettings(lib('2.18.1'), null, {})).toEqual([]);
    expect(unseenNcclSettings(lib(null), null, {})).toEqual([]);
  });
});
