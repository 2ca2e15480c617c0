#!/usr/bin/env node
// Runs the one-file build that `npm run build` makes: loading one module
// instead of ~150 separate ones is most of nccl-run's start-up time
// (scripts/bench.js measures both). tsx is for development only (`npm run dev`).
import '../dist/nccl-run.mjs';
