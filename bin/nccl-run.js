#!/usr/bin/env -S node --
// The Node half of nccl-run for plain `node bin/nccl-run.js`: reads, decides,
// exports, verifies, and prints for explain, env, check and --dry-run. The
// command users run is bin/nccl-run, the shell that then execs torchrun in
// nccl-run's place (SPEC "Launch"); this file alone, on a Node without
// process.execve, refuses the launch itself (78). `node --`: Node 20 reads a
// later `--env-file PATH` (ours, or a training script's) as its own option
// and exits 9 when PATH is missing (nodejs/node#54232).
import './nccl-run.cjs';
