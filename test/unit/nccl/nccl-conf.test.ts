/**
 * NCCL's configuration files as the user's settings (src/nccl/nccl-conf.ts),
 * read from a file tree made for each case.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseNcclConf, readNcclConf } from '../../../src/nccl/nccl-conf.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), 'nccl-conf-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const passwdHome = userInfo().homedir;

describe('readNcclConf', () => {
  it('~/.nccl.conf before /etc/nccl.conf, the environment above both', () => {
    tree({
      '/home/u/.nccl.conf': 'NCCL_SOCKET_IFNAME=^docker,lo\n',
      '/etc/nccl.conf': 'NCCL_SOCKET_IFNAME=eth0\nNCCL_SOCKET_FAMILY=AF_INET\nNCCL_DEBUG=WARN\n',
    });
    const conf = readNcclConf({ HOME: '/home/u', NCCL_DEBUG: 'INFO' }, null, root);
    expect(conf).toEqual({
      values: { NCCL_SOCKET_IFNAME: '^docker,lo', NCCL_SOCKET_FAMILY: 'AF_INET' },
      origins: { NCCL_SOCKET_IFNAME: '/home/u/.nccl.conf', NCCL_SOCKET_FAMILY: '/etc/nccl.conf' },
      // What a snapshot records (HostFacts.ncclConf): the files read, in NCCL's order.
      files: [
        { file: '/home/u/.nccl.conf', text: 'NCCL_SOCKET_IFNAME=^docker,lo\n' },
        {
          file: '/etc/nccl.conf',
          text: 'NCCL_SOCKET_IFNAME=eth0\nNCCL_SOCKET_FAMILY=AF_INET\nNCCL_DEBUG=WARN\n',
        },
      ],
    });
  });

  it("a snapshot's recorded files are parsed instead of this machine's (a --facts replay)", () => {
    tree({ '/etc/nccl.conf': 'NCCL_SOCKET_IFNAME=here\n' });
    const recorded = [{ file: '/home/alice/.nccl.conf', text: 'NCCL_SOCKET_IFNAME=there\n' }];
    const conf = readNcclConf({ HOME: '/home/u' }, null, root, recorded);
    expect(conf.values).toEqual({ NCCL_SOCKET_IFNAME: 'there' });
    expect(conf.origins).toEqual({ NCCL_SOCKET_IFNAME: '/home/alice/.nccl.conf' });
    // A record of no files is one too: nothing from this machine.
    expect(readNcclConf({ HOME: '/home/u' }, null, root, []).values).toEqual({});
  });

  it('$NCCL_CONF_FILE replaces ~/.nccl.conf from 2.23, and is unknown to 2.22', () => {
    tree({
      '/home/u/.nccl.conf': 'NCCL_SOCKET_IFNAME=home\n',
      [`${passwdHome}/.nccl.conf`]: 'NCCL_SOCKET_IFNAME=passwd\n',
      '/opt/job.conf': 'NCCL_SOCKET_IFNAME=named\n',
    });
    const env = { HOME: '/home/u', NCCL_CONF_FILE: '/opt/job.conf' };
    expect(readNcclConf(env, '2.23.4', root).values).toEqual({ NCCL_SOCKET_IFNAME: 'named' });
    expect(readNcclConf({ HOME: '/home/u' }, null, root).values).toEqual({
      NCCL_SOCKET_IFNAME: 'home',
    });
    // 2.22 reads the home file, found through the passwd entry, not $HOME.
    expect(readNcclConf(env, '2.22.3', root).values).toEqual({ NCCL_SOCKET_IFNAME: 'passwd' });
  });

  // Issue 42: initEnv setenv()s the files at ncclInit in every release (v2.3.7-1 src/init.cu:102,
  // v2.18.6-1 src/init.cc:79), before the bootstrap's getenv: the classic `^docker0` line
  // (horovod/horovod#700) reached NCCL 2.3.5.
  it('every release reads them, 2.18 and older as 2.19', () => {
    tree({ '/etc/nccl.conf': 'NCCL_SOCKET_IFNAME=^docker0\n' });
    for (const version of ['2.3.7', '2.18.6', '2.19.3', null]) {
      expect(readNcclConf({}, version, root).values).toEqual({ NCCL_SOCKET_IFNAME: '^docker0' });
    }
  });

  it('keeps only NCCL_ variables', () => {
    tree({ '/etc/nccl.conf': 'GLOO_SOCKET_IFNAME=eth0\nNCCL_IB_HCA=mlx5\n' });
    expect(readNcclConf({}, null, root).values).toEqual({ NCCL_IB_HCA: 'mlx5' });
  });
});

describe('parseNcclConf (setEnvFile)', () => {
  it.each<[string, [string, string][]]>([
    ['NCCL_SOCKET_IFNAME=eth0\n', [['NCCL_SOCKET_IFNAME', 'eth0']]],
    // Everything after the first '=', untrimmed.
    ['NCCL_SOCKET_IFNAME= =eth0 \n', [['NCCL_SOCKET_IFNAME', ' =eth0 ']]],
    ['# NCCL_SOCKET_IFNAME=eth0\nno equals sign\n\n', []],
    [
      'A=1\nB=2',
      [
        ['A', '1'],
        ['B', '2'],
      ],
    ],
  ])('%j', (text, entries) => {
    expect(parseNcclConf(text)).toEqual(entries);
  });
});
