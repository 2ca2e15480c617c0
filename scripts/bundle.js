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
import { readFileSync } from 'node:fs';
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

export async function bundle({ outfile = BUNDLE_PATH } = {}) {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const templates = Object.fromEntries(
    TEMPLATE_FILES.map((file) => [file, readFileSync(join(root, file), 'utf8')]),
  );
  const result = await build({
    stdin: {
      // The entry point: only here is the status turned into the process's exit
      // (process.exit, so a handle left open can never keep nccl-run alive
      // after torchrun is gone; stdout and stderr are synchronous on Linux).
      contents: [
        "import { main } from './src/cli/main.ts';",
        'process.exit(await main(process.argv.slice(2)));',
      ].join('\n'),
      resolveDir: root,
      sourcefile: 'nccl-run-entry.ts',
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outfile,
    banner: {
      js: [
        '#!/usr/bin/env node',
        "import { createRequire as __ncclRunCreateRequire } from 'node:module';",
        'const require = __ncclRunCreateRequire(import.meta.url);',
      ].join('\n'),
    },
    define: {
      NCCL_RUN_VERSION: JSON.stringify(version),
      NCCL_RUN_TEMPLATES: JSON.stringify(templates),
    },
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
  });
  return { outfile, bytes: readFileSync(outfile).length, metafile: result.metafile };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { outfile, bytes } = await bundle();
  process.stdout.write(`${outfile} (${(bytes / 1024).toFixed(0)} KiB)\n`);
}
