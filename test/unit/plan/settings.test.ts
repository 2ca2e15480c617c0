/**
 * What the user set (src/plan/settings.ts): the environment over the env
 * file over NCCL's own files, the values nccl-run keeps, decided once, and
 * where each came from. NCCL_CONF_FILE names a file of this test's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { userEnvironment, userSettings } from '../../../src/plan/settings.js';

const dir = mkdtempSync(join(tmpdir(), 'settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const conf = join(dir, 'nccl.conf');
writeFileSync(conf, 'NCCL_SOCKET_IFNAME=ib\nNCCL_SOCKET_FAMILY=AF_INET6\nNCCL_IB_HCA=mlx5\n');

const settled = { envFileExtras: { PET_NNODES: '2', NCCL_SOCKET_FAMILY: 'AF_INET' } };
const read = (env: NodeJS.ProcessEnv, force = false, nccl: string | null = '2.29.7') =>
  userSettings(userEnvironment(settled, env), nccl, force);

describe('userSettings', () => {
  it("layers the environment over the env file over NCCL's file, and keeps what the user set", () => {
    const settings = read({
      NCCL_CONF_FILE: conf,
      NCCL_COMM_ID: '[2001:db8::1]:2222',
      X: undefined,
    });
    expect(settings.env).toEqual({
      PET_NNODES: '2',
      NCCL_SOCKET_FAMILY: 'AF_INET',
      NCCL_CONF_FILE: conf,
      NCCL_COMM_ID: '[2001:db8::1]:2222',
    });
    expect(settings.ncclEnv).toMatchObject({
      NCCL_SOCKET_IFNAME: 'ib',
      NCCL_SOCKET_FAMILY: 'AF_INET',
      NCCL_IB_HCA: 'mlx5',
    });
    expect(settings.kept).toEqual({ ifname: 'ib', family: 'AF_INET' });
    expect(settings.commIdHost).toBe('2001:db8::1');
  });

  it('keeps nothing forceable under --force', () => {
    expect(read({ NCCL_CONF_FILE: conf }, true).kept).toEqual({ ifname: null, family: null });
  });

  it('keeps no value NCCL itself ignores (an interface list shorter than two characters)', () => {
    expect(read({ NCCL_SOCKET_IFNAME: 'e' }).kept.ifname).toBeNull();
  });

  // initEnv setenv()s the files at ncclInit in every release (v2.3.7-1 src/init.cu:102,
  // v2.18.6-1 src/init.cc:79): NVIDIA/nccl#286's maintainer answer points users at /etc/nccl.conf.
  it("reads NCCL's files for every release, 2.18 as 2.29 (~/.nccl.conf: 2.18 has no NCCL_CONF_FILE)", () => {
    expect(read({ NCCL_CONF_FILE: conf }, false, '2.29.7').ncclEnv).toHaveProperty('NCCL_IB_HCA');
    expect(read({ NCCL_CONF_FILE: conf }, false, '2.18.6').ncclEnv).not.toHaveProperty(
      'NCCL_IB_HCA',
    );
  });

  it('says where each value came from', () => {
    const settings = read({ NCCL_CONF_FILE: conf, PET_NODE_RANK: '1', NCCL_DEBUG: 'INFO' });
    expect(settings.originOf('NCCL_IB_HCA')).toEqual({
      name: 'NCCL_IB_HCA',
      from: 'nccl-conf',
      file: conf,
    });
    expect(settings.originOf('PET_NODE_RANK')).toMatchObject({ from: 'pet' });
    expect(settings.originOf('NCCL_DEBUG')).toMatchObject({ from: 'env' });
    expect(settings.originOf('PET_NNODES')).toMatchObject({ from: 'env-file' });
  });
});
