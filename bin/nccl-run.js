#!/usr/bin/env node
// Runs the build that `npm run build` makes with esbuild (scripts/bundle.js):
// one main module plus chunks loaded on demand, instead of ~150 separate
// modules, is most of nccl-run's start-up time (scripts/bench.js measures it).
// tsx is for development only (`npm run dev`).
import '../dist/bin/nccl-run.js';
