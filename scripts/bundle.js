#!/usr/bin/env node
/**
 * The one-file build (`npm run bundle`): dist/nccl-run.mjs holds nccl-run and
 * every dependency, runs with plain `node` and no node_modules, and is
 * executable itself (shebang). Dockerfile.example copies it into the image.
 *
 * - ESM for Node 20, built from the TypeScript sources (no tsc step needed);
 *   bin/ loads a CommonJS build of the same program (buildBin, below).
 * - What the normal build reads from the package folder at run time is
 *   inlined with esbuild `define`: the version (src/package-version.ts) and the
 *   template files of `nccl-run init` (src/templates/init.ts).
 * - pino and pino-pretty, which log.ts requires at the first log line, are
 *   bundled like the rest: esbuild runs a bundled CommonJS module's body at
 *   its first require(), not when the bundle loads.
 * - The Node built-ins in LAZY_BUILTINS are required at their first use
 *   (lazyBuiltins, below).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Files `nccl-run init` reads, by their path from the package root
 * (src/templates/shipped-files.ts TEMPLATES), and the program of --verify collective
 * (src/collective/program.ts), read the same way.
 */
export const TEMPLATE_FILES = [
  'templates/slurm.sbatch',
  'templates/trainjob.yaml',
  'templates/pytorchjob.yaml',
  'templates/lws.yaml',
  'templates/compose.yaml',
  'templates/nccl-run.env',
  'Dockerfile.example',
  'templates/collective.py',
];

export const BUNDLE_PATH = join(root, 'dist', 'nccl-run.mjs');

export const BIN_DIR = join(root, 'dist', 'bin');

/**
 * Built-ins that `node -e 0` has not loaded and that a run needs only on some
 * paths: child_process (only where ip is asked; it loads dgram too), crypto
 * (dotenv's decryption, the probe's HMAC), fs/promises (it loads readline),
 * timers/promises (verify's clock), worker_threads. esbuild turns each
 * `import { x } from 'node:m'` (and a dependency's `require('m')`) into a
 * require() at the top of its module, so a run compiled every one of them
 * whether it used it or not: together about a tenth of the dry run's
 * instructions. Each is an object of functions and constants, so a stand-in
 * whose getters require it on first read serves every use nccl-run makes.
 */
export const LAZY_BUILTINS = [
  'child_process',
  'crypto',
  'fs/promises',
  'timers/promises',
  'worker_threads',
];

const nodeRequire = createRequire(import.meta.url);

/** The esbuild plugin that puts the stand-ins in place of LAZY_BUILTINS. */
export const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join('|')})$`);
    build.onResolve({ filter }, ({ path, namespace }) =>
      // The stand-in's own require is the real module.
      namespace === 'lazy-builtin'
        ? { path, external: true }
        : { path: path.replace(/^node:/, ''), namespace: 'lazy-builtin' },
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, ({ path }) => ({
      loader: 'js',
      contents: [
        'let loaded;',
        `const load = () => (loaded ??= require(${JSON.stringify(`node:${path}`)}));`,
        `for (const name of ${JSON.stringify(Object.keys(nodeRequire(path)))}) {`,
        '  Object.defineProperty(module.exports, name, { enumerable: true, get: () => load()[name] });',
        '}',
      ].join('\n'),
    }));
  },
};

/** What both builds share: nccl-run from its TypeScript sources, for Node 20. */
export function buildOptions() {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const templates = Object.fromEntries(
    TEMPLATE_FILES.map((file) => [file, readFileSync(join(root, file), 'utf8')]),
  );
  return {
    bundle: true,
    platform: 'node',
    target: 'node20',
    define: {
      NCCL_RUN_VERSION: JSON.stringify(version),
      NCCL_RUN_TEMPLATES: JSON.stringify(templates),
    },
    // cliui's ESM entry (the one yargs imports) wraps --help at the column
    // width mid-word ("/dev/infini" / "band"); its CommonJS build wraps at
    // word boundaries (wrap-ansi).
    alias: { cliui: join(root, 'node_modules/cliui/build/index.cjs') },
    minify: process.env.NCCL_RUN_BUNDLE_MINIFY !== '0',
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    plugins: [lazyBuiltins],
  };
}

/** The one-file build: everything in one .mjs, for images and copying around. */
export async function bundle({ outfile = BUNDLE_PATH } = {}) {
  const result = await build({
    ...buildOptions(),
    entryPoints: [join(root, 'src/cli/run.ts')],
    format: 'esm',
    outfile,
    banner: {
      js: [
        // `node --`: Node 20 takes a later `--env-file PATH`, ours or the training
        // script's, for its own option and exits 9 when PATH is missing
        // (nodejs/node#54232); after `--` it leaves every argument to us.
        '#!/usr/bin/env -S node --',
        // CJS dependencies (yargs' helpers, pino, dotenv) call `require` for
        // Node built-ins; an ESM file has none, so the banner makes one.
        "import { createRequire as __ncclRunCreateRequire } from 'node:module';",
        'const require = __ncclRunCreateRequire(import.meta.url);',
      ].join('\n'),
    },
  });
  return { outfile, bytes: readFileSync(outfile).length, metafile: result.metafile };
}

/**
 * What bin/nccl-run.cjs loads: the same program as one CommonJS file that
 * exports start(), which the loader compiles with V8's code cache. The ESM
 * loader and the split build's chunks cost more start-up than the code they
 * saved compiling: CommonJS plus the cache took the dry run from 2.1x to
 * 1.7x the CPU time of `node -e 0` (scripts/bench.js).
 */
export async function buildBin({ outdir = BIN_DIR } = {}) {
  // The cache of an older build would be rejected; the loader writes a new one at its first run.
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    ...buildOptions(),
    entryPoints: [join(root, 'src/cli/entry.ts')],
    format: 'cjs',
    outfile: join(outdir, 'nccl-run.cjs'),
    // Both builds inline what package-version.ts and templates/init.ts would read
    // relative to import.meta.url, so that branch is never reached here.
    define: { ...buildOptions().define, 'import.meta.url': 'undefined' },
  });
  return { outdir, metafile: result.metafile };
}

/**
 * One dry run through the loader writes the code cache, so that a user's
 * first run is as fast as the next (what it compiles is what start-up needs).
 */
function warmCodeCache() {
  execFileSync(
    process.execPath,
    [join(root, 'bin', 'nccl-run.cjs'), '--dry-run', '--iface', 'lo', '--verify', 'none'],
    { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: 'ignore', timeout: 20_000 },
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [{ outfile, bytes }] = await Promise.all([bundle(), buildBin()]);
  warmCodeCache();
  process.stdout.write(`${outfile} (${(bytes / 1024).toFixed(0)} KiB) and ${BIN_DIR}/\n`);
}
