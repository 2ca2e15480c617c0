/**
 * Which torch and which NCCL the launcher will run (src/plan/read-stack.ts), read from
 * file trees laid out as each installation lays them out: Debian's
 * python3-torch and libnccl2, a venv, conda, pip's --user site, NVIDIA's
 * images. Pip wheels cannot be installed on this machine: their layout is
 * modelled from the wheels' own file lists (RECORD of torch-2.5.1+cu124 and
 * nvidia_nccl_cu12-2.21.5: `torch/version.py`, `nvidia/nccl/lib/libnccl.so.2`
 * as a plain file, `nvidia_nccl_cu12-2.21.5.dist-info/`), with empty files.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ncclRules } from '../../../src/nccl/behaviour.js';
import { readStack } from '../../../src/plan/read-stack.js';
import { torchrunTable } from '../../../src/torch/torchrun-table.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Files (text) and links (-> target, relative) under a fresh root. */
function tree(entries: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), 'read-stack-'));
  for (const [path, content] of Object.entries(entries)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    if (content.startsWith('-> ')) symlinkSync(content.slice(3), join(root, path));
    else writeFileSync(join(root, path), content);
  }
  return root;
}

const torchPackage = (site: string, version: string) => ({
  [`${site}/torch/__init__.py`]: '',
  [`${site}/torch/version.py`]: `from typing import Optional\n\n__all__ = ['__version__']\n__version__ = '${version}'\ncuda: Optional[str] = '12.4'\n`,
});
const ncclWheel = (site: string, version: string) => ({
  [`${site}/nvidia/nccl/lib/libnccl.so.2`]: 'ELF',
  [`${site}/nvidia/nccl/include/nccl.h`]: '',
  [`${site}/nvidia_nccl_cu12-${version}.dist-info/METADATA`]: `Name: nvidia-nccl-cu12\nVersion: ${version}\n`,
});
const pipScript = (python: string) =>
  `#!${python}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom torch.distributed.run import main\n`;
const debianPython = {
  '/usr/bin/python3': '-> python3.11',
  '/usr/bin/python3.11': 'ELF',
  '/usr/lib/python3/dist-packages/.keep': '',
};
const PATH = '/usr/local/bin:/usr/bin:/bin';

describe('readStack', () => {
  it("Debian: /usr/bin/torchrun's #! Python, dist-packages, the system's libnccl2", () => {
    tree({
      ...debianPython,
      '/usr/bin/torchrun': pipScript('/usr/bin/python3.11'),
      ...torchPackage('/usr/lib/python3/dist-packages', '2.6.0+debian'),
      '/etc/ld.so.conf': 'include /etc/ld.so.conf.d/*.conf\n',
      '/etc/ld.so.conf.d/x86_64-linux-gnu.conf': '/usr/lib/x86_64-linux-gnu\n',
      '/usr/lib/x86_64-linux-gnu/libnccl.so.2': '-> libnccl.so.2.22.3',
      '/usr/lib/x86_64-linux-gnu/libnccl.so.2.22.3': 'ELF',
    });
    const stack = readStack(['torchrun'], { PATH, HOME: '/root' }, { root });
    expect(stack.torch).toMatchObject({
      version: '2.6.0+debian',
      source: '/usr/lib/python3/dist-packages/torch/version.py',
    });
    expect(stack.nccl).toEqual({
      version: '2.22.3',
      source: '/usr/lib/x86_64-linux-gnu/libnccl.so.2.22.3',
      library: '/usr/lib/x86_64-linux-gnu/libnccl.so.2',
    });
    expect(torchrunTable(stack.torch.version).torch).toBe('2.6');
    expect(ncclRules(stack.nccl.version)).toBe('2.18-2.27');
  });

  it("a venv: pyvenv.cfg makes it the prefix; the wheel's NCCL beside torch, not NCCL_VERSION", () => {
    tree({
      ...debianPython,
      '/venv/pyvenv.cfg':
        'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n',
      '/venv/bin/python': '-> ../../usr/bin/python3.11',
      '/venv/bin/torchrun': pipScript('/venv/bin/python'),
      ...torchPackage('/venv/lib/python3.11/site-packages', '2.5.1+cu124'),
      ...ncclWheel('/venv/lib/python3.11/site-packages', '2.21.5'),
      // An image's NCCL_VERSION and system NCCL, which this torch never loads.
      '/usr/lib/libnccl.so.2': '-> libnccl.so.2.26.2',
      ...torchPackage('/usr/lib/python3/dist-packages', '1.13.0a0'),
    });
    const stack = readStack(['/venv/bin/torchrun'], { PATH, NCCL_VERSION: '2.26.2-1' }, { root });
    expect(stack.torch.version).toBe('2.5.1+cu124');
    expect(stack.nccl).toEqual({
      version: '2.21.5',
      source: '/venv/lib/python3.11/site-packages/nvidia_nccl_cu12-2.21.5.dist-info',
      library: '/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2',
    });
    // A torch between the tables reads torchrun by the union.
    expect(torchrunTable(stack.torch.version).torch).toBeNull();
  });

  it('a venv with the system site: its own site first, then the base Python’s', () => {
    tree({
      ...debianPython,
      '/venv/pyvenv.cfg':
        'home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n',
      '/venv/bin/python3': '-> ../../usr/bin/python3.11',
      ...torchPackage('/usr/lib/python3/dist-packages', '1.13.0a0'),
    });
    const stack = readStack(
      ['/venv/bin/python3', '-m', 'torch.distributed.run'],
      { PATH },
      { root },
    );
    expect(stack.torch.source).toBe('/usr/lib/python3/dist-packages/torch/version.py');
  });

  it("conda: the prefix's site-packages, its lib/ NCCL, the version from conda-meta", () => {
    tree({
      '/opt/conda/bin/python3.12': 'ELF',
      '/opt/conda/bin/python': '-> python3.12',
      '/opt/conda/bin/torchrun': pipScript('/opt/conda/bin/python'),
      ...torchPackage('/opt/conda/lib/python3.12/site-packages', '2.4.0'),
      '/opt/conda/conda-meta/nccl-2.23.4.1-h03a54cd_3.json': '{}',
      '/opt/conda/lib/libnccl.so.2': 'ELF',
      '/usr/lib/libnccl.so.2': '-> libnccl.so.2.18.3',
    });
    const stack = readStack(['torchrun'], { PATH: `/opt/conda/bin:${PATH}` }, { root });
    expect(stack.torch.version).toBe('2.4.0');
    expect(stack.nccl).toEqual({
      version: '2.23.4',
      source: '/opt/conda/conda-meta/nccl-2.23.4.1-h03a54cd_3.json',
      library: '/opt/conda/lib/libnccl.so.2',
    });
  });

  it("pip install --user: the user site comes before Debian's, unless PYTHONNOUSERSITE", () => {
    tree({
      ...debianPython,
      '/home/u/.local/bin/torchrun': pipScript('/usr/bin/python3'),
      ...torchPackage('/home/u/.local/lib/python3.11/site-packages', '2.14.1+cu130'),
      ...ncclWheel('/home/u/.local/lib/python3.11/site-packages', '2.29.7'),
      ...torchPackage('/usr/lib/python3/dist-packages', '1.13.0a0'),
    });
    const env = { PATH: `/home/u/.local/bin:${PATH}`, HOME: '/home/u' };
    const user = readStack(['torchrun'], env, { root });
    expect(user.torch.version).toBe('2.14.1+cu130');
    expect(user.nccl.version).toBe('2.29.7');
    expect(torchrunTable(user.torch.version).torch).toBe('2.14');
    const system = readStack(['torchrun'], { ...env, PYTHONNOUSERSITE: '1' }, { root });
    expect(system.torch.version).toBe('1.13.0a0');
    expect(system.nccl.version).toBeNull();
  });

  it("NVIDIA's images: /usr/local dist-packages, #!/usr/bin/env python, the system NCCL and NCCL_VERSION", () => {
    tree({
      '/usr/bin/python': '-> python3.10',
      '/usr/bin/python3.10': 'ELF',
      '/usr/lib/python3/dist-packages/.keep': '',
      '/usr/local/bin/torchrun': pipScript('/usr/bin/env python'),
      ...torchPackage('/usr/local/lib/python3.10/dist-packages', '2.6.0a0+ecf3bae40a.nv25.01'),
      '/usr/lib/x86_64-linux-gnu/libnccl.so.2': 'ELF',
    });
    const env = { PATH, LD_LIBRARY_PATH: '/usr/lib/x86_64-linux-gnu', NCCL_VERSION: '2.25.1' };
    const stack = readStack(['torchrun'], env, { root });
    expect(stack.torch.version).toBe('2.6.0a0+ecf3bae40a.nv25.01');
    // The system's libnccl.so.2 names no version: NCCL_VERSION describes it.
    expect(stack.nccl).toMatchObject({ version: '2.25.1', source: 'NCCL_VERSION' });
  });

  it("pip's /bin/sh trampoline for a long interpreter path", () => {
    const long = `/srv/${'x'.repeat(120)}/bin/python3.12`;
    tree({
      [long]: 'ELF',
      '/srv/torchrun': `#!/bin/sh\n'''exec' "${long}" "$0" "$@"\n' '''\nimport sys\n`,
      ...torchPackage(`/srv/${'x'.repeat(120)}/lib/python3.12/site-packages`, '2.14.1'),
    });
    expect(readStack(['/srv/torchrun'], { PATH }, { root }).torch.version).toBe('2.14.1');
  });

  it('unknown, saying why: no launcher, no Python, no torch', () => {
    tree({
      ...debianPython,
      '/usr/bin/report.js': '#!/usr/bin/env node\n',
      '/usr/bin/node': 'ELF',
      '/usr/bin/torchrun': pipScript('/usr/bin/python3'),
    });
    expect(readStack(['nope'], { PATH }, { root }).torch).toMatchObject({
      version: null,
      source: 'the launcher nope is not on PATH',
    });
    expect(readStack(['report.js'], { PATH }, { root }).torch.source).toBe(
      'the #! line of /usr/bin/report.js names /usr/bin/node, which is not a Python',
    );
    expect(readStack(['torchrun'], { PATH, HOME: '/h' }, { root }).torch.source).toMatch(
      /^no torch package for \/usr\/bin\/python3 \(the #! line of \/usr\/bin\/torchrun\) in \/h\/\.local\/lib\/python3\.11\/site-packages, /,
    );
  });
});

describe('readStack through the wrappers users write (src/torch/launcher-wrappers.ts)', () => {
  const condaEnv = (prefix: string, torch: string) => ({
    [`${prefix}/bin/python3.12`]: 'ELF',
    [`${prefix}/bin/python`]: '-> python3.12',
    [`${prefix}/bin/torchrun`]: pipScript(`${prefix}/bin/python`),
    [`${prefix}/conda-meta/history`]: '',
    ...torchPackage(`${prefix}/lib/python3.12/site-packages`, torch),
  });

  it("conda run -n NAME: the environment's own torchrun, found as conda activates it", () => {
    tree({ '/opt/conda/bin/conda': 'ELF', ...condaEnv('/opt/conda/envs/train', '2.6.0') });
    const env = { PATH, CONDA_EXE: '/opt/conda/bin/conda' };
    const stack = readStack(
      ['conda', 'run', '--no-capture-output', '-n', 'train', 'torchrun'],
      env,
      {
        root,
      },
    );
    expect(stack.torch).toMatchObject({
      version: '2.6.0',
      known: 'read',
      via: ['conda run -n train'],
      source: '/opt/conda/envs/train/lib/python3.12/site-packages/torch/version.py',
    });
    expect(
      readStack(['conda', 'run', '-p', '/opt/conda/envs/train', 'torchrun'], { PATH }, { root })
        .torch.version,
    ).toBe('2.6.0');
    expect(
      readStack(['conda', 'run', '-n', 'nope', 'torchrun'], env, { root }).torch,
    ).toMatchObject({
      version: null,
      known: 'unknown',
      source: 'conda run -n nope: no conda environment named nope found',
    });
  });

  it("env VAR=x, and uv run: the project's .venv above the working folder", () => {
    tree({
      '/work/proj/pyproject.toml': '[project]\nname = "p"\n',
      '/work/proj/.venv/pyvenv.cfg':
        'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n',
      '/work/proj/.venv/bin/python': '-> /usr/bin/python3.11',
      '/work/proj/.venv/bin/torchrun': pipScript('/work/proj/.venv/bin/python'),
      '/work/proj/src/.keep': '',
      ...debianPython,
      ...torchPackage('/work/proj/.venv/lib/python3.11/site-packages', '2.14.1+cu130'),
    });
    const stack = readStack(
      ['env', 'OMP_NUM_THREADS=1', 'uv', 'run', '--frozen', 'torchrun'],
      { PATH },
      {
        root,
        cwd: '/work/proj/src',
      },
    );
    expect(stack.torch).toMatchObject({ version: '2.14.1+cu130', via: ['env', 'uv run'] });
    expect(
      readStack(
        ['uv', 'run', '-m', 'torch.distributed.launch'],
        { PATH },
        { root, cwd: '/work/proj' },
      ).torch,
    ).toMatchObject({ version: '2.14.1+cu130', entry: 'launch' });
  });

  it('pixi run: the project’s .pixi/envs/default', () => {
    tree({ '/w/pixi.toml': '[workspace]\n', ...condaEnv('/w/.pixi/envs/default', '2.5.1') });
    expect(
      readStack(['pixi', 'run', 'torchrun'], { PATH }, { root, cwd: '/w' }).torch,
    ).toMatchObject({
      version: '2.5.1',
      via: ['pixi run'],
    });
  });

  it('apptainer exec of a sandbox folder reads inside it; a SIF file it cannot', () => {
    tree({
      '/images/torch.sandbox/usr/bin/python3': '-> python3.11',
      '/images/torch.sandbox/usr/bin/python3.11': 'ELF',
      '/images/torch.sandbox/usr/bin/torchrun': pipScript('/usr/bin/python3'),
      '/images/torch.sandbox/usr/lib/python3/dist-packages/.keep': '',
      ...torchPackage('/images/torch.sandbox/usr/lib/python3/dist-packages', '2.6.0+debian'),
      '/images/torch.sif': 'SIF',
    });
    const words = [
      'apptainer',
      '--quiet',
      'exec',
      '--nv',
      '-B',
      '/data:/data',
      '/images/torch.sandbox',
      'torchrun',
    ];
    expect(readStack(words, { PATH: '/opt/site/bin' }, { root }).torch).toMatchObject({
      version: '2.6.0+debian',
      via: ['apptainer exec /images/torch.sandbox'],
    });
    const sif = readStack(
      ['singularity', 'exec', '--nv', '/images/torch.sif', 'torchrun'],
      { PATH },
      { root },
    );
    expect(sif.torch).toMatchObject({ version: null, known: 'unknown' });
    expect(sif.torch.source).toMatch(/^singularity exec \/images\/torch\.sif: an image file/);
    expect(sif.nccl.version).toBeNull();
  });

  it('chroot ROOT reads in that root', () => {
    tree({
      ...Object.fromEntries(Object.entries(debianPython).map(([k, v]) => [`/srv/root${k}`, v])),
      '/srv/root/usr/bin/torchrun': pipScript('/usr/bin/python3.11'),
      ...torchPackage('/srv/root/usr/lib/python3/dist-packages', '1.13.1'),
    });
    expect(readStack(['chroot', '/srv/root', 'torchrun'], { PATH }, { root }).torch.version).toBe(
      '1.13.1',
    );
  });
});

describe('a declared torch (--torch-version)', () => {
  const origin = { name: '--torch-version', from: 'flag' } as const;

  it('stands where nccl-run cannot read the torch, and explain says it was declared', () => {
    tree({ '/images/torch.sif': 'SIF' });
    const stack = readStack(
      ['apptainer', 'exec', '/images/torch.sif', 'torchrun'],
      { PATH },
      {
        root,
        declared: { version: '2.6', origin },
      },
    );
    expect(stack.torch).toMatchObject({ version: '2.6', known: 'declared' });
    expect(stack.torch.source).toMatch(
      /^declared by --torch-version; nccl-run cannot read it: apptainer exec/,
    );
    expect(torchrunTable(stack.torch.version).torch).toBe('2.6');
  });

  it('gives way to the torch the launcher runs, with a warning where they differ', () => {
    tree({
      ...debianPython,
      '/usr/bin/torchrun': pipScript('/usr/bin/python3.11'),
      ...torchPackage('/usr/lib/python3/dist-packages', '2.14.1+debian'),
    });
    const differs = readStack(
      ['torchrun'],
      { PATH },
      { root, declared: { version: '2.6', origin } },
    );
    expect(differs.torch).toMatchObject({ version: '2.14.1+debian', known: 'read' });
    expect(differs.warnings).toEqual([
      `--torch-version 2.6 contradicts the torch 2.14.1+debian this launcher runs (/usr/lib/python3/dist-packages/torch/version.py): nccl-run follows the file; drop the declaration for this launcher, or check --torchrun`,
    ]);
    const agrees = readStack(
      ['torchrun'],
      { PATH },
      { root, declared: { version: '2.14.1', origin } },
    );
    expect(agrees.warnings).toEqual([]);
  });
});
