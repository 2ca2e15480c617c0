/**
 * What the miniature left in its private folder: the gathered result (the
 * node's first rank writes it), the stage each local rank reached (for a
 * collective that did not finish), and NCCL's INFO lines, read with audit's
 * reader (src/audit). NCCL's files exist only where NCCL ran: a Gloo run
 * has none.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RankRecord, readNcclLog } from '../audit/rank-record.js';
import { type CollectiveResult, parseCollectiveResult } from './result.js';
import { miniaturePaths } from './run-miniature.js';

export interface MiniatureOutcome {
  result: CollectiveResult | null;
  /** Why there is no result where the file was there but unreadable. */
  resultProblem: string | null;
  /** Global rank → the last stage it wrote (import, init, all-reduce, ring, done). */
  stages: Map<number, string>;
  nccl: RankRecord[];
}

export function readOutcome(dir: string): MiniatureOutcome {
  const paths = miniaturePaths(dir);
  let result: CollectiveResult | null = null;
  let resultProblem: string | null = null;
  const text = readOptional(paths.result);
  if (text !== null) {
    const parsed = parseCollectiveResult(text);
    if (parsed.ok) result = parsed.result;
    else resultProblem = `${paths.result}: ${parsed.problem}`;
  }
  const stages = new Map<number, string>();
  for (const name of listOptional(dir)) {
    const rank = /^stage\.(\d+)$/.exec(name)?.[1];
    if (rank === undefined) continue;
    stages.set(Number(rank), (readOptional(join(dir, name)) ?? '').trim());
  }
  const sources = listOptional(paths.nccl).map((name) => ({
    source: join(paths.nccl, name),
    text: readOptional(join(paths.nccl, name)) ?? '',
  }));
  return { result, resultProblem, stages, nccl: readNcclLog(sources).ranks };
}

function readOptional(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function listOptional(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}
