#!/usr/bin/env -S node --
// `node --`: Node 20 reads a later `--env-file PATH` (ours, or a training
// script's) as its own option and exits 9 when PATH is missing
// (nodejs/node#54232); after `--` it leaves every argument to nccl-run.
// Runs the build that `npm run build` makes with esbuild (scripts/bundle.js):
// one main module plus chunks loaded on demand, instead of ~150 separate
// modules, is most of nccl-run's start-up time (scripts/bench.js measures it).
// tsx is for development only (`npm run dev`).
import '../dist/bin/nccl-run.js';
