#!/usr/bin/env node
/**
 * The one-file build (`npm run bundle`): dist/nccl-run.mjs holds nccl-run and
 * every dependency, runs with plain `node` and no node_modules, and is
 * executable itself (shebang). Dockerfile.example copies it into the image.
 *
 * - ESM for Node 20, built from the TypeScript sources (no tsc step needed).
 * - CJS dependencies (yargs' helpers, pino, pino-pretty, dotenv) call
 *   `require` for Node built-ins; an ESM file has none, so the banner makes one
 *   with createRequire.
 * - What the normal build reads from the package folder at run time is
 *   inlined with esbuild `define`: the version (src/version.ts) and the
 *   template files of `nccl-run init` (src/templates/template-files.ts).
 * - pino-pretty, which log.ts imports only on a terminal, is bundled like the
 *   rest: a dynamic import of a bare name becomes a lazy chunk-free module.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Files `nccl-run init` reads, by their path from the package root (src/templates/catalog.ts). */
export const TEMPLATE_FILES = [
  'templates/slurm.sbatch',
  'templates/pytorchjob.yaml',
  'templates/compose.yaml',
  'templates/nccl-run.env',
  'Dockerfile.example',
];

export const BUNDLE_PATH = join(root, 'dist', 'nccl-run.mjs');

export const BIN_DIR = join(root, 'dist', 'bin');

/** What both builds share: nccl-run from its TypeScript sources, for Node 20, as ESM. */
function buildOptions() {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const templates = Object.fromEntries(
    TEMPLATE_FILES.map((file) => [file, readFileSync(join(root, file), 'utf8')]),
  );
  return {
    entryPoints: { 'nccl-run': join(root, 'src/cli/entry.ts') },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    banner: {
      js: [
        // `node --`: Node 20 takes a later `--env-file PATH`, ours or the training
        // script's, for its own option and exits 9 when PATH is missing
        // (nodejs/node#54232); after `--` it leaves every argument to us.
        '#!/usr/bin/env -S node --',
        "import { createRequire as __ncclRunCreateRequire } from 'node:module';",
        'const require = __ncclRunCreateRequire(import.meta.url);',
      ].join('\n'),
    },
    define: {
      NCCL_RUN_VERSION: JSON.stringify(version),
      NCCL_RUN_TEMPLATES: JSON.stringify(templates),
    },
    minify: process.env.NCCL_RUN_BUNDLE_MINIFY !== '0',
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
  };
}

/** The one-file build: everything in one .mjs, for images and copying around. */
export async function bundle({ outfile = BUNDLE_PATH } = {}) {
  const result = await build({ ...buildOptions(), outfile });
  return { outfile, bytes: readFileSync(outfile).length, metafile: result.metafile };
}

/**
 * What bin/nccl-run.js runs: the same, split so that what only some commands
 * need (yargs for --help, execa for the launch, pino-pretty for a terminal,
 * the verification, the templates) is a chunk loaded on demand. Parsing one
 * 500 KiB file cost ~40 ms more start-up than the 240 KiB main chunk.
 */
export async function buildBin({ outdir = BIN_DIR } = {}) {
  // Chunk names carry a content hash: without this, every build would leave its old chunks behind.
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    ...buildOptions(),
    splitting: true,
    outdir,
    entryNames: '[name]',
  });
  return { outdir, metafile: result.metafile };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [{ outfile, bytes }] = await Promise.all([bundle(), buildBin()]);
  process.stdout.write(`${outfile} (${(bytes / 1024).toFixed(0)} KiB) and ${BIN_DIR}/\n`);
}
