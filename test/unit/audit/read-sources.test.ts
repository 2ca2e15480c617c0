/** What audit reads (src/audit/read-sources.ts), on real files, folders and streams. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { readSources } from '../../../src/audit/read-sources.js';
import { NothingToReadError } from '../../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'aud-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readSources', () => {
  it('a folder as --nccl-log leaves it (every file, nested ones too, in name order), and a file', async () => {
    mkdirSync(join(dir, 'logs', 'node2'), { recursive: true });
    writeFileSync(join(dir, 'logs', 'node1.11.log'), 'a');
    writeFileSync(join(dir, 'logs', 'node2', 'node2.22.log'), 'b');
    writeFileSync(join(dir, 'one.txt'), 'c');
    const read = await readSources([join(dir, 'logs'), join(dir, 'one.txt')]);
    expect(read).toEqual([
      { source: join(dir, 'logs', 'node1.11.log'), text: 'a' },
      { source: join(dir, 'logs', 'node2', 'node2.22.log'), text: 'b' },
      { source: join(dir, 'one.txt'), text: 'c' },
    ]);
  });

  it('standard input for `-` and for no path at all', async () => {
    expect(await readSources([], Readable.from(['x\n']))).toEqual([{ source: '-', text: 'x\n' }]);
    expect(await readSources(['-'], Readable.from(['y']))).toEqual([{ source: '-', text: 'y' }]);
  });

  it('a path that is not there: exit 66 naming it', async () => {
    const missing = join(dir, 'nope');
    const error = await readSources([missing]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NothingToReadError);
    expect((error as NothingToReadError).exitCode).toBe(66);
    expect((error as Error).message).toContain(`cannot read ${missing}: ENOENT`);
  });
});
