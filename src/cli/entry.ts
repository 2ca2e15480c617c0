/**
 * The process entry of every build: only here is main()'s status turned into
 * the process's exit (process.exit, so a handle left open can never keep
 * nccl-run alive after torchrun is gone; stdout and stderr are synchronous
 * on Linux, so nothing written is lost).
 */
import { main } from './main.js';

process.exit(await main(process.argv.slice(2)));
