#!/usr/bin/env node
// Runs the compiled CLI; tsx is for development only (`npm run dev`).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
