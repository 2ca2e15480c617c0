/**
 * The wrappers around torchrun (src/torch/launcher-wrappers.ts), unwrapped
 * on file trees laid out as each tool lays its environments out; readStack
 * through them is test/unit/plan/read-stack.test.ts's.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unwrapLauncher } from '../../../src/torch/launcher-wrappers.js';

const root = mkdtempSync(join(tmpdir(), 'wrappers-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
for (const file of [
  '/opt/conda/envs/train/conda-meta/history',
  '/home/u/.conda/envs/mine/conda-meta/history',
  '/img/sandbox/usr/bin/torchrun',
  '/img/sandbox/.singularity.d/env/10-docker2singularity.sh',
  '/img/image.sif',
]) {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(
    join(root, file),
    file.endsWith('.sh') ? 'export PATH="/opt/conda/bin:/usr/bin"\n' : '',
  );
}

const unwrap = (words: string[], env: NodeJS.ProcessEnv = { PATH: '/usr/bin' }) =>
  unwrapLauncher(words, env, '/', root);

describe('unwrapLauncher', () => {
  it('leaves a launcher that is no wrapper as it is', () => {
    expect(unwrap(['torchrun'])).toEqual({
      words: ['torchrun'],
      root,
      env: { PATH: '/usr/bin' },
      via: [],
      clears: null,
    });
  });

  it('env: -i, -u, assignments, then the command', () => {
    expect(
      unwrap(['env', '-u', 'HOME', 'A=1', 'B=x=y', 'torchrun'], { PATH: '/p', HOME: '/h' }),
    ).toMatchObject({
      words: ['torchrun'],
      env: { PATH: '/p', A: '1', B: 'x=y' },
      via: ['env'],
    });
    expect(unwrap(['env', '-i', 'PATH=/q', 'torchrun'], { HOME: '/h' })).toMatchObject({
      env: { PATH: '/q' },
    });
    expect(unwrap(['env', '-S', 'torchrun -x'])).toMatchObject({
      unreadable: expect.stringMatching(/^env -S/),
    });
  });

  it("conda, mamba and micromamba run: the named or given environment's bin/ first on PATH", () => {
    const named = unwrap(['mamba', 'run', '-n', 'train', 'torchrun'], {
      PATH: '/usr/bin',
      CONDA_EXE: '/opt/conda/bin/conda',
    });
    expect(named).toMatchObject({
      env: { PATH: '/opt/conda/envs/train/bin:/usr/bin', CONDA_PREFIX: '/opt/conda/envs/train' },
      via: ['mamba run -n train'],
    });
    expect(
      unwrap(['micromamba', 'run', '-n', 'mine', 'torchrun'], { HOME: '/home/u' }),
    ).toMatchObject({
      env: { CONDA_PREFIX: '/home/u/.conda/envs/mine' },
    });
    expect(unwrap(['conda', 'run', '--prefix=/x', 'torchrun'])).toMatchObject({
      env: { CONDA_PREFIX: '/x' },
    });
  });

  it("apptainer exec: every option placed by apptainer's own table, the sandbox's PATH", () => {
    const words = [
      'apptainer',
      '-q',
      'exec',
      '--nv',
      '--cleanenv',
      '-B',
      '/d',
      '--pwd=/w',
      '--env',
      'X=1',
      '/img/sandbox',
      'torchrun',
      '--nnodes=2',
    ];
    expect(unwrap(words, { PATH: '/usr/bin', SECRET: 's' })).toEqual({
      words: ['torchrun', '--nnodes=2'],
      root: join(root, 'img/sandbox'),
      env: { PATH: '/opt/conda/bin:/usr/bin' },
      via: ['apptainer exec /img/sandbox'],
      clears: 'apptainer exec --cleanenv',
    });
  });

  it('names the wrapper that starts its command with a clean environment, readable or not', () => {
    expect(unwrap(['env', '-i', 'PATH=/q', 'torchrun'])).toMatchObject({ clears: 'env -i' });
    expect(unwrap(['env', 'A=1', 'torchrun'])).toMatchObject({ clears: null });
    expect(unwrap(['apptainer', 'exec', '-e', '/img/image.sif', 'torchrun'])).toMatchObject({
      unreadable: expect.any(String),
      clears: 'apptainer exec -e',
    });
    expect(
      unwrap(['singularity', 'exec', '--containall', '/img/sandbox', 'torchrun']),
    ).toMatchObject({ words: ['torchrun'], clears: 'singularity exec --containall' });
    expect(unwrap(['apptainer', 'exec', '--nv', '/img/image.sif', 'torchrun'])).toMatchObject({
      clears: null,
    });
    // The outer wrapper's clean start holds through the inner ones.
    expect(unwrap(['pixi', 'run', '--clean-env', 'torchrun'])).toMatchObject({
      clears: 'pixi run --clean-env',
    });
    expect(unwrap(['env', '-i', 'chroot', '/img/sandbox', 'torchrun'])).toMatchObject({
      via: ['env -i', 'chroot /img/sandbox'],
      clears: 'env -i',
    });
  });

  it("cannot read a SIF file, a registry's image or an image's own runscript", () => {
    expect(unwrap(['apptainer', 'exec', '/img/image.sif', 'torchrun'])).toMatchObject({
      unreadable: expect.stringMatching(/an image file or a registry's image/),
    });
    expect(unwrap(['singularity', 'exec', 'docker://pytorch/pytorch', 'torchrun'])).toMatchObject({
      unreadable: expect.stringMatching(/^singularity exec docker:/),
    });
    expect(unwrap(['apptainer', 'run', '/img/sandbox'])).toMatchObject({
      unreadable: "apptainer run runs the image's own script, which nccl-run cannot read",
    });
  });

  it('chroot: the command read in the new root', () => {
    expect(unwrap(['chroot', '--userspec=1000:1000', '/img/sandbox', 'torchrun'])).toMatchObject({
      words: ['torchrun'],
      root: join(root, 'img/sandbox'),
      via: ['chroot /img/sandbox'],
    });
  });

  it('stops at eight wrappers deep', () => {
    const words = [...Array.from({ length: 9 }, () => ['env', 'A=1']).flat(), 'torchrun'];
    expect(unwrap(words)).toMatchObject({ unreadable: 'more than 8 wrappers deep' });
  });
});
