#!/usr/bin/env node
/**
 * Writes man/nccl-run.1 (nccl-run(1)) at every build, from the built
 * dist/cli/man-page.js (src/cli/man-page.ts): the page is made from the
 * option table, never edited by hand. npm installs it (package.json `man`);
 * scripts/release.js puts it into the wheel's share/man/man1.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the build writes the page, and where npm and the wheel take it from. */
export const MAN_PAGE_PATH = join(root, 'man', 'nccl-run.1');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { manPage } = await import('../dist/cli/man-page.js');
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  mkdirSync(dirname(MAN_PAGE_PATH), { recursive: true });
  writeFileSync(MAN_PAGE_PATH, manPage(version));
}
