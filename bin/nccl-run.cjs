// The Node half of nccl-run, loaded with V8's code cache: the program is one
// CommonJS file (dist/bin/nccl-run.cjs, from scripts/bundle.js), compiled
// through vm.Script with the cache that the first run left beside it, so a
// run parses and compiles almost nothing (scripts/bench.js measures it).
// CommonJS, because the ESM loader alone costs more start-up than all of
// nccl-run's work; a cache rejected by another Node is rebuilt and replaced.
'use strict';
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

const program = join(__dirname, '..', 'dist', 'bin', 'nccl-run.cjs');
const cacheFile = `${program}.cache`;
let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {}
const source = readFileSync(program, 'utf8');
const script = new Script(
  `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
  { filename: program, cachedData },
);
const module_ = { exports: {} };
script.runInThisContext()(module_.exports, require, module_, program, dirname(program));
const stale = cachedData === undefined || script.cachedDataRejected;
module_.exports.start({
  // After the run, so that the functions it compiled are in the cache too;
  // a read-only install simply goes without.
  beforeExit: stale
    ? () => {
        try {
          writeFileSync(`${cacheFile}.${process.pid}`, script.createCachedData());
          renameSync(`${cacheFile}.${process.pid}`, cacheFile);
        } catch {}
      }
    : undefined,
});
