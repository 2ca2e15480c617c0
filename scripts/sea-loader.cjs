// The single executable's main script (scripts/release.js): it compiles
// nccl-run, embedded as the asset program.cjs, with the V8 code cache the
// release made by running it once (the asset program.cache), as
// bin/nccl-run.cjs does for the npm package. A cache made after a run holds
// every function that run compiled; Node's own `useCodeCache` holds only
// what compiling the script compiled, and started the dry run a quarter
// slower (scripts/bench-release.js). A cache another Node made is rejected
// by V8 and the program compiles from source, so a wrong build still gets to
// say so (src/cli/single-executable.ts).
'use strict';
const { getAsset, getRawAsset } = require('node:sea');
const { Script } = require('node:vm');

const FILENAME = 'nccl-run.cjs';
const source = getAsset('program.cjs', 'utf8');
let cachedData;
try {
  cachedData = Buffer.from(getRawAsset('program.cache'));
} catch {} // the release's first pass, which makes it
const script = new Script(
  `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
  { filename: FILENAME, cachedData },
);
// Only scripts/release.js sets this, for the run that makes the cache; the
// prefix is the internal one bin/nccl-run's own variables have.
const cacheOut = process.env.NCCLRUN_CODE_CACHE_OUT;
if (cacheOut) {
  process.on('exit', () => require('node:fs').writeFileSync(cacheOut, script.createCachedData()));
}
const module_ = { exports: {} };
script.runInThisContext()(module_.exports, require, module_, FILENAME, '/');
