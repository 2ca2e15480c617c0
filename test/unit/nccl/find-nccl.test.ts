/**
 * The system's NCCL (src/nccl/find-nccl.ts): NCCL_VERSION as NVIDIA's images
 * declare it, and the first libnccl.so.2 on the library path
 * (src/host/library-dirs.ts) of a file tree made for each case. Which of the
 * two counts, beside a wheel's or conda's NCCL, is read-stack.test.ts's.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { declaredNcclVersion, libraryPathNccl } from '../../../src/nccl/find-nccl.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Files (text) and links (-> target) under a fresh root. */
function tree(entries: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), 'nccl-version-'));
  for (const [path, content] of Object.entries(entries)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    if (content.startsWith('-> ')) symlinkSync(content.slice(3), join(root, path));
    else writeFileSync(join(root, path), content);
  }
  return root;
}

describe('declaredNcclVersion and libraryPathNccl', () => {
  it.each([
    ['2.22.3', '2.22.3'],
    ['2.21.5-1', '2.21.5'],
    ['2.26.2+cuda12.4', '2.26.2'],
  ])('NCCL_VERSION=%s', (value, version) => {
    expect(declaredNcclVersion({ NCCL_VERSION: value })).toEqual({
      version,
      source: 'NCCL_VERSION',
    });
  });

  it('LD_LIBRARY_PATH first, then ld.so.conf and its includes, then the defaults', () => {
    tree({
      '/opt/a/lib/libnccl.so.2': '-> libnccl.so.2.27.3',
      '/opt/a/lib/libnccl.so.2.27.3': '',
      '/etc/ld.so.conf': 'include /etc/ld.so.conf.d/*.conf\n',
      '/etc/ld.so.conf.d/cuda.conf': '# CUDA\n/usr/local/cuda/lib64\n',
      '/usr/local/cuda/lib64/libnccl.so.2': '-> libnccl.so.2.21.5',
      '/usr/lib/libnccl.so.2': '-> libnccl.so.2.18.6',
    });
    expect(libraryPathNccl({ LD_LIBRARY_PATH: '/opt/a/lib' }, root)?.version).toEqual({
      version: '2.27.3',
      source: '/opt/a/lib/libnccl.so.2.27.3',
    });
    expect(declaredNcclVersion({ NCCL_VERSION: 'unknown' })).toBeNull();
    expect(libraryPathNccl({}, root)?.version?.version).toBe('2.21.5');
    rmSync(join(root, 'etc'), { recursive: true });
    expect(libraryPathNccl({}, root)?.version?.version).toBe('2.18.6');
  });

  it('the first libnccl.so.2 decides, also when it names no version (a pip wheel)', () => {
    tree({
      '/opt/wheel/libnccl.so.2': 'ELF',
      '/usr/lib/libnccl.so.2': '-> libnccl.so.2.22.3',
    });
    expect(libraryPathNccl({ LD_LIBRARY_PATH: '/opt/wheel' }, root)).toEqual({
      file: '/opt/wheel/libnccl.so.2',
      version: null,
    });
  });

  it('none found', () => {
    expect(libraryPathNccl({}, tree({}))).toBeNull();
  });
});
