/**
 * The GPU check's report (issue 31): what gpu-check.sh collected in its work
 * folder, judged by stack-checks.ts and run-checks.ts, written where the device tool brings files
 * back. test/device/prepare.sh bundles it, with report-main.ts, into
 * .gpu-check/report.mjs, which the carried Node runs there:
 *
 *   node report.mjs WORK OUT      exit 0 when every check passed, else 1
 *
 * OUT gets 7 files (gpu-check.sh adds work.tar.gz; the device tool brings
 * back 8 at most): summary.txt (the table, and NCCL's own lines that decided
 * it), report.json, explain.json (nccl-run's, node 0 of the data path), one
 * log per run (the agents' output, then NCCL's logs) and netns.txt (what the
 * machine allowed). Everything read from the work folder is checked with zod: a
 * missing or malformed piece is a failed check that says so, never a crash.
 */
import {
  copyFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readOneProcess } from '../../src/audit/rank-record.js';
import { type Row, renderTable, skip } from './rows.js';
import { busBandwidth, dataPathRows, gbPerSecond, type NodeRun, trapRows } from './run-checks.js';
import { stackRows } from './stack-checks.js';

const bound = z.object({ interface: z.string(), address: z.string() });

const explainSchema = z.object({
  decision: bound.nullable().catch(null),
  unmanaged: z.object({ nccl: bound.nullable() }).catch({ nccl: null }),
  torch: z.object({ version: z.string().nullable(), source: z.string() }),
  nccl: z.object({
    version: z.string().nullable(),
    source: z.string(),
    library: z.string().nullable(),
  }),
});

const stackSchema = z.object({
  executable: z.string(),
  prefix: z.string(),
  basePrefix: z.string(),
  torch: z.string(),
  torchFile: z.string(),
  ncclRuntime: z.string().nullable(),
  ncclWheel: z
    .object({ name: z.string(), version: z.string(), distInfo: z.string().nullable() })
    .nullable(),
  loadedNccl: z.array(z.string()),
});

const envSchema = z
  .record(z.string(), z.union([z.string(), z.number()]).nullable())
  .transform((env) =>
    Object.fromEntries(
      Object.entries(env).map(([name, value]) => [name, value === null ? null : String(value)]),
    ),
  );

const resultSchema = z.object({
  rank: z.number().int(),
  ranks: z.number().int().positive(),
  bytes: z.number().positive(),
  iters: z.number().int().positive(),
  seconds: z.number().positive(),
  correct: z.boolean(),
});

/** The runs gpu-check.sh makes, in order, and the label of each one's rows. */
const RUNS = [
  { name: 'datapath', label: 'b) data path' },
  { name: 'trap-alone', label: 'c) trap alone' },
  { name: 'trap-nccl-run', label: 'c) trap via nccl-run' },
] as const;

export function report(work: string, out: string): number {
  const runs = Object.fromEntries(
    RUNS.map(({ name }) => [name, readRun(join(work, 'runs', name))]),
  );
  const rows = [...prerequisiteRows(work), ...stackSection(work), ...runSections(work, runs)];
  const table = renderTable(rows);
  const summary = [
    'GPU check (issue 31)',
    '',
    table,
    '',
    ...ncclLines(work),
    ...bandwidthLines(runs.datapath ?? null),
  ].join('\n');
  writeFileSync(join(out, 'summary.txt'), `${summary}\n`);
  process.stdout.write(`${summary}\n`);

  const explain = join(work, 'runs', 'datapath', 'explain-node0.json');
  if (existsSync(explain)) copyFileSync(explain, join(out, 'explain.json'));
  for (const { name } of RUNS) {
    const dir = join(work, 'runs', name);
    if (existsSync(dir)) writeFileSync(join(out, `${name}.log`), runLog(dir));
  }
  const netns = read(join(work, 'netns.txt'));
  if (netns !== null) writeFileSync(join(out, 'netns.txt'), netns);
  writeFileSync(
    join(out, 'report.json'),
    `${JSON.stringify({ rows, runs, stack: readStack(work), netns: netns?.split('\n').filter(Boolean) ?? [] }, null, 2)}\n`,
  );
  return rows.some((r) => r.status === 'fail') ? 1 : 0;
}

/** The prerequisite table gpu-check.sh printed: ok passes, rehearsal is a skip, the rest fails. */
function prerequisiteRows(work: string): Row[] {
  return (read(join(work, 'prereqs.tsv')) ?? '')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [check = '', status = '', detail = ''] = line.split('\t');
      return {
        check,
        status: status === 'ok' ? 'pass' : status === 'rehearsal' ? 'skip' : 'fail',
        detail,
      };
    });
}

function stackSection(work: string): Row[] {
  const explained = parseJson(
    read(join(work, 'runs', 'datapath', 'explain-node0.json')),
    explainSchema,
  );
  const python = readStack(work);
  const [torchrun = '', interpreter = ''] = (read(join(work, 'launcher.txt')) ?? '').split('\n');
  if (explained === null || python === null) {
    const missing = [
      explained === null ? "nccl-run's explain --json" : null,
      python === null
        ? `stack.json (${read(join(work, 'stack.err'))?.trim().split('\n').pop() ?? 'not made'})`
        : null,
    ].filter(Boolean);
    return [{ check: 'a) stack', status: 'fail', detail: `missing: ${missing.join(', ')}` }];
  }
  return stackRows(explained, python, { torchrun, interpreter }, resolve);
}

function runSections(work: string, runs: Record<string, NodeRun[] | null>): Row[] {
  const skipped = (name: string) => read(join(work, 'runs', name, 'skipped'))?.trim();
  const rows: Row[] = [];
  const datapath = runs.datapath ?? null;
  rows.push(
    ...(datapath === null
      ? [skip('b) data path', skipped('datapath') ?? 'not run')]
      : dataPathRows('b) data path', datapath)),
  );
  const alone = runs['trap-alone'] ?? null;
  const through = runs['trap-nccl-run'] ?? null;
  if (alone === null && through === null) {
    const refusal = (read(join(work, 'netns.txt')) ?? '')
      .split('\n')
      .find((line) => /^(refused|missing)/.test(line));
    rows.push(
      skip(
        'c) trap',
        skipped('trap-alone') ?? `this machine made no lab: ${refusal ?? 'see netns.txt'}`,
      ),
    );
    return rows;
  }
  rows.push(
    ...(alone === null
      ? [skip('c) trap alone', skipped('trap-alone') ?? 'not run')]
      : trapRows(alone)),
  );
  rows.push(
    ...(through === null
      ? [skip('c) trap via nccl-run', skipped('trap-nccl-run') ?? 'not run')]
      : dataPathRows('c) trap via nccl-run', through)),
  );
  return rows;
}

/** Both nodes of a run; null when the run did not happen (no agent log). */
function readRun(dir: string): NodeRun[] | null {
  if (!existsSync(join(dir, 'agent0.log'))) return null;
  return [0, 1].map((node) => {
    const agent = read(join(dir, `agent${node}.log`)) ?? '';
    const explained = parseJson(read(join(dir, `explain-node${node}.json`)), explainSchema);
    const exit = read(join(dir, `exit${node}`))?.trim();
    return {
      node,
      exitCode: exit === undefined || exit === '' ? null : Number(exit),
      stopped: read(join(dir, `stopped${node}`))?.trim() ?? null,
      decision: explained?.decision ?? null,
      unmanaged: explained?.unmanaged.nccl ?? null,
      env: taggedLine(agent, 'GPU_CHECK_ENV', envSchema),
      worker: readOneProcess(
        ncclLogs(dir, node)
          .map(([, text]) => text)
          .join('\n'),
      ),
      result: taggedLine(agent, 'GPU_CHECK_RESULT', resultSchema),
    };
  });
}

/** NCCL's log files of a node's worker (NCCL_DEBUG_FILE=nccl-nodeN.%p.log), by name. */
function ncclLogs(dir: string, node: number): [string, string][] {
  return readdirSync(dir)
    .filter((file) => file.startsWith(`nccl-node${node}.`))
    .sort()
    .map((file) => [file, read(join(dir, file)) ?? '']);
}

/** A run's one log: each agent's output, then NCCL's own logs. */
function runLog(dir: string): string {
  const parts: string[] = [];
  for (const node of [0, 1]) {
    for (const file of [`explain-node${node}.err`, `agent${node}.log`, `stopped${node}`]) {
      const text = read(join(dir, file));
      if (text !== null && text !== '') parts.push(`==> node ${node}: ${file} <==\n${text}`);
    }
    for (const [file, text] of ncclLogs(dir, node))
      parts.push(`==> node ${node}: ${file} <==\n${text}`);
  }
  return `${parts.join('\n')}\n`;
}

/** NCCL's own lines behind the verdicts: version, bootstrap, sockets, channels, warnings. */
function ncclLines(work: string): string[] {
  const wanted = [
    /NCCL version/,
    /Bootstrap ?: Using/,
    /NET\/Socket ?: Using \[/,
    /NCCL_HOSTID set/,
  ];
  const lines: string[] = [];
  for (const { name } of RUNS) {
    const dir = join(work, 'runs', name);
    if (!existsSync(dir)) continue;
    for (const node of [0, 1]) {
      const text = ncclLogs(dir, node)
        .map(([, t]) => t)
        .join('\n')
        .split('\n');
      const picked = [
        ...text.filter((line) => wanted.some((pattern) => pattern.test(line))),
        ...text.filter((line) => / via /.test(line)).slice(0, 2),
        ...text.filter((line) => /NCCL WARN/.test(line)).slice(0, 3),
      ];
      lines.push(
        `NCCL's lines, ${name}, node ${node}:`,
        ...(picked.length > 0 ? picked : ['(none)']).map((l) => `  ${l}`),
      );
    }
  }
  return lines;
}

function bandwidthLines(datapath: NodeRun[] | null): string[] {
  const result = datapath?.find((node) => node.result?.rank === 0)?.result;
  if (result === undefined || result === null) return [];
  const { algBw, busBw } = busBandwidth(result);
  return [
    '',
    `all_reduce ${result.bytes} bytes, ${result.ranks} ranks: ${(result.seconds * 1000).toFixed(2)} ms, algBw ${gbPerSecond(algBw)}, busBw ${gbPerSecond(busBw)} (busBw = algBw × 2(n−1)/n, as nccl-tests)`,
  ];
}

function readStack(work: string) {
  return parseJson(read(join(work, 'stack.json')), stackSchema);
}

/** The JSON after `tag ` on the last line that has it, checked; null when none parses. */
function taggedLine<T>(text: string, tag: string, schema: z.ZodType<T>): T | null {
  const line = text
    .split('\n')
    .filter((l) => l.includes(`${tag} `))
    .pop();
  return line === undefined
    ? null
    : parseJson(line.slice(line.indexOf(`${tag} `) + tag.length + 1), schema);
}

function parseJson<T>(text: string | null, schema: z.ZodType<T>): T | null {
  if (text === null) return null;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function read(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function resolve(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
