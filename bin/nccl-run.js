#!/usr/bin/env -S node --
// The Node half of nccl-run: reads, decides, exports and verifies, and prints
// for explain, env, check and --dry-run. The command users run is bin/nccl-run,
// the shell that then execs torchrun in nccl-run's place (SPEC "Launch");
// run alone on Node 20, this file refuses the launch itself (78), having no
// execve. `node --`: Node 20 reads a later `--env-file PATH` (ours, or a
// training script's) as its own option and exits 9 when PATH is missing
// (nodejs/node#54232).
// It runs the build that `npm run build` makes with esbuild (scripts/bundle.js):
// one main module plus chunks loaded on demand, instead of ~150 separate
// modules, is most of nccl-run's start-up time (scripts/bench.js measures it).
// tsx is for development only (`npm run dev`).
import '../dist/bin/nccl-run.js';
