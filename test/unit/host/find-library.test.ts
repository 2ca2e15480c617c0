/**
 * The loader's search (src/host/find-library.ts) over folder trees written
 * here; the same rules are held to glibc's real loader by the loader tier
 * (test/e2e/net-plugin-loader.test.ts), on Debian roots. What a Debian tree
 * cannot show is here: a RHEL-like tree, whose loader searches /lib64 and
 * /usr/lib64.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findLibrary, ldLibraryPath, systemFolders } from '../../../src/host/find-library.js';

const trees = mkdtempSync(join(tmpdir(), 'n37-find-library-'));
afterAll(() => rmSync(trees, { recursive: true, force: true }));
const file = (root: string, path: string) => {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), '');
};
const rhel = join(trees, 'rhel');
file(rhel, '/usr/lib64/libnccl-net.so');
const debian = join(trees, 'debian');
file(debian, '/usr/lib/x86_64-linux-gnu/libc.so.6');
file(debian, '/usr/lib64/libnccl-net.so');

describe('findLibrary', () => {
  it('RHEL: /lib64 and /usr/lib64 are the system folders', () => {
    expect(systemFolders(rhel, 'x64')).toEqual(['/lib64', '/usr/lib64']);
    expect(findLibrary('libnccl-net.so', { env: {}, root: rhel, cache: new Map() })).toEqual({
      path: '/usr/lib64/libnccl-net.so',
      via: 'system folder',
    });
  });

  it('Debian: the multiarch folders, then /lib and /usr/lib; /usr/lib64 is not searched', () => {
    expect(systemFolders(debian, 'x64')).toEqual([
      '/lib/x86_64-linux-gnu',
      '/usr/lib/x86_64-linux-gnu',
      '/lib',
      '/usr/lib',
    ]);
    expect(findLibrary('libnccl-net.so', { env: {}, root: debian, cache: new Map() })).toBeNull();
  });

  it('LD_LIBRARY_PATH: `:` and `;` separate, an empty element is the working folder', () => {
    expect(ldLibraryPath(':/a;/b::')).toEqual(['.', '/a', '/b', '.', '.']);
    expect(ldLibraryPath(undefined)).toEqual([]);
  });
});
