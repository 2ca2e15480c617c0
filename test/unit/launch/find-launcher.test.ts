/**
 * findLauncher against real files: the launcher is found as execvp(3) will
 * find it at the exec, and one that cannot start is SPEC's 127 or 126 with a
 * message naming the command and where it was looked for.
 */
import { chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LauncherError } from '../../../src/errors.js';
import { findLauncher } from '../../../src/launch/find-launcher.js';
import { fixture } from '../../fixtures/fixture-report.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function binDir(files: Record<string, number>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ncr-find-launcher-'));
  dirs.push(dir);
  for (const [name, mode] of Object.entries(files)) {
    writeFileSync(join(dir, name), '#!/bin/sh\n');
    chmodSync(join(dir, name), mode);
  }
  return dir;
}

function failure(command: string | undefined, path: string | undefined): LauncherError {
  try {
    findLauncher(command, path);
  } catch (error) {
    expect(error).toBeInstanceOf(LauncherError);
    return error as LauncherError;
  }
  throw new Error(`findLauncher(${command}) did not fail`);
}

describe('findLauncher', () => {
  it('takes the first executable file on PATH, skipping a non-executable one before it', () => {
    const first = binDir({ torchrun: 0o644 });
    const second = binDir({ torchrun: 0o755 });
    expect(findLauncher('torchrun', `${first}:${second}`)).toBe(join(second, 'torchrun'));
  });

  it('takes a name with a slash as the file itself', () => {
    expect(findLauncher(fixture('report-launcher.js'), '/nonexistent')).toBe(
      fixture('report-launcher.js'),
    );
  });

  it('is 127 naming the command and the PATH searched', () => {
    const error = failure('nccl-run-no-such-launcher', '/nonexistent-a:/nonexistent-b');
    expect(error.exitCode).toBe(127);
    expect(error.message).toContain('"nccl-run-no-such-launcher"');
    expect(error.message).toContain('PATH=/nonexistent-a:/nonexistent-b');
  });

  it('is 127 for a path that does not exist', () => {
    const error = failure('/nonexistent/bin/torchrun', undefined);
    expect(error.exitCode).toBe(127);
    expect(error.message).toContain('"/nonexistent/bin/torchrun" not found (no such file)');
  });

  it('is 127 for an empty command', () => {
    expect(failure('', undefined).exitCode).toBe(127);
    expect(failure(undefined, undefined).exitCode).toBe(127);
  });

  it('is 126 for a file that is not executable, named where it was found on PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ncr-find-launcher-'));
    dirs.push(dir);
    copyFileSync(fixture('not-executable.js'), join(dir, 'torchrun'));
    chmodSync(join(dir, 'torchrun'), 0o644);
    const error = failure('torchrun', dir);
    expect(error.exitCode).toBe(126);
    expect(error.message).toContain(join(dir, 'torchrun'));
    expect(error.message).toContain('not executable');
  });

  it('is 126 naming the missing #! interpreter of a moved virtualenv', () => {
    const error = failure(fixture('moved-venv-launcher'), undefined);
    expect(error.exitCode).toBe(126);
    expect(error.message).toContain('"/nonexistent/venv/bin/python3"');
  });
});
