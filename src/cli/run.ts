/**
 * Runs nccl-run: the entry of the one-file bundle and of `npm run dev`
 * (bin/nccl-run.cjs calls start() itself, around its code cache).
 */
import { start } from './entry.js';

await start();
