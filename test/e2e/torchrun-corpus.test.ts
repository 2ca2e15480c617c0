/**
 * The corpus of real torchrun command lines (test/fixtures/torchrun-corpus.ts)
 * read by nccl-run and by torch 1.13, 2.6 and 2.14 themselves (issue 28 item
 * 5): both must accept or refuse a line alike, and where they accept it, see
 * the same rendezvous backend, endpoint host and port, node count (min, max)
 * and, for the static backend, node rank. A row marked `differs` for a
 * version must still differ exactly as it says, so a product change shows
 * which rows it flips.
 *
 * nccl-run reads in-process, as main() does before anything runs:
 * checkTorchrunPart (the torchrun part as every known torchrun reads it),
 * then readJobShape with that torch's table. torch reads each line with
 * test/fixtures/torchrun-parser.py --derive: the launcher's own parse_args
 * and run(), up to elastic_launch, then the rendezvous parameters as the
 * agent reads them; one Python process per torch for all rows. torch gets
 * the row's environment plus what nccl-run would export (its `fill`), as
 * it would under nccl-run.
 */
import { beforeAll, expect, it } from 'vitest';
import { checkTorchrunPart } from '../../src/cli/misplaced-options.js';
import { NcclRunError } from '../../src/errors.js';
import type { JobShape } from '../../src/job/job-shape.js';
import { readJobShape } from '../../src/job/read-job-shape.js';
import {
  certainRefusal,
  parseTorchrunArgs,
  type TorchrunArgs,
} from '../../src/torch/torchrun-args.js';
import { torchrunTable } from '../../src/torch/torchrun-table.js';
import { CORPUS, type CorpusRow, LAUNCH } from '../fixtures/torchrun-corpus.js';
import { tier } from '../lab/tier.js';
import {
  askTorchParser,
  type ParserReport,
  TORCH_VERSIONS,
  type TorchVersion,
  torchRoot,
} from '../lab/torch-parser.js';

/** torchrun-parser.py --derive's answer for one line. */
type TorchReading =
  | { stage: 'argparse'; exit: number; message: string }
  | { stage: 'run'; error: string }
  | {
      stage?: undefined;
      backend: string;
      endpoint: string;
      host: string | null;
      port: number | null;
      minNodes: number;
      maxNodes: number;
      nodeRank?: number;
    };

type OurReading =
  | { exit: number; message: string }
  | { exit?: undefined; shape: JobShape; args: TorchrunArgs };

function readOurs(row: CorpusRow, version: TorchVersion): OurReading {
  try {
    checkTorchrunPart({ command: 'run', commandArgs: [], flags: {}, torchrun: row.argv });
    const table = torchrunTable(version, row.launcher === LAUNCH ? 'launch' : 'run');
    const args = parseTorchrunArgs(row.argv, table);
    // As the plan does: what the known torch's own parser refuses, refused first.
    const refusal = certainRefusal(args, version);
    if (refusal !== null) throw refusal;
    const shape = readJobShape(row.argv, row.env ?? {}, null, table);
    return { shape, args };
  } catch (error) {
    if (!(error instanceof NcclRunError)) throw error;
    return { exit: error.exitCode, message: error.message };
  }
}

const hostPort = (host: string, port: number | string) =>
  `${host.includes(':') ? `[${host}]` : host}:${port}`;

/** "static node001:29500, 2 nodes, rank 1" or "refuses: <why>", the wording of `differs`' torch. */
function theirWords(reading: TorchReading): string {
  if (reading.stage === 'argparse') return `refuses: ${reading.message.replace(/^.*?error: /, '')}`;
  if (reading.stage === 'run') return `refuses: ${reading.error}`;
  const nodes =
    reading.minNodes === reading.maxNodes
      ? `${reading.minNodes} node${reading.minNodes === 1 ? '' : 's'}`
      : `${reading.minNodes}:${reading.maxNodes} nodes`;
  const rank = reading.nodeRank === undefined ? '' : `, rank ${reading.nodeRank}`;
  const endpoint =
    reading.host === null ? reading.endpoint : hostPort(reading.host, reading.port ?? '');
  return `${reading.backend} ${endpoint}, ${nodes}${rank}`;
}

/** The same for nccl-run, and what it lets through to torchrun or warns about: the wording of `differs`' today. */
function ourWords(reading: OurReading): string {
  if (reading.exit !== undefined) return `exit ${reading.exit}: ${reading.message}`;
  const { shape, args } = reading;
  const { min, max } = shape.nnodes;
  const nodes = min === max ? `${min} node${min === 1 ? '' : 's'}` : `${min}:${max} nodes`;
  const rank =
    shape.rdzvBackend === 'static' && shape.nodeRank ? `, rank ${shape.nodeRank.value}` : '';
  const endpoint =
    shape.master === null
      ? "localhost (torch's own)"
      : hostPort(shape.master.host, shape.master.port);
  const passed = [
    args.unrecognized.length > 0 && `lets ${args.unrecognized.join(' ')} through`,
    args.otherVersions.length > 0 && `warns: ${args.otherVersions.join(' ')} is another torch's`,
    args.scriptIndex === null && 'no script',
  ].filter(Boolean);
  return `${shape.rdzvBackend} ${endpoint}, ${nodes}${rank}${passed.map((what) => `; ${what}`).join('')}`;
}

/** Whether nccl-run reads the line as the torch does: both refuse it, or both see the same job. */
function agrees(ours: OurReading, theirs: TorchReading): boolean {
  if (theirs.stage !== undefined || ours.exit !== undefined) {
    return theirs.stage !== undefined && ours.exit !== undefined;
  }
  const { shape, args } = ours;
  if (args.unrecognized.length > 0 || args.otherVersions.length > 0 || args.scriptIndex === null) {
    return false;
  }
  const endpoint =
    shape.master === null
      ? theirs.host === 'localhost' // --standalone, 2.14's single-node c10d: torch's own endpoint
      : theirs.host === shape.master.host && theirs.port === shape.master.port;
  const rank = theirs.nodeRank === undefined || theirs.nodeRank === shape.nodeRank?.value;
  return (
    endpoint &&
    rank &&
    theirs.backend === shape.rdzvBackend &&
    theirs.minNodes === shape.nnodes.min &&
    theirs.maxNodes === shape.nnodes.max
  );
}

const TITLED = CORPUS.map((row, index) => ({ row, index, title: `#${index} ${row.source}` }));

for (const version of TORCH_VERSIONS) {
  const root = torchRoot(version);
  tier(
    `torch ${version} reads the corpus of real command lines as nccl-run does`,
    'error' in root ? root.error : null,
    () => {
      const ours = CORPUS.map((row) => readOurs(row, version));
      let report: ParserReport<TorchReading>;

      beforeAll(async () => {
        if ('error' in root) return;
        const requests = CORPUS.map((row, index) => {
          const read = ours[index] as OurReading;
          return {
            argv: row.argv,
            launcher: row.launcher === 'python -m torch.distributed.launch' ? 'launch' : 'run',
            env: { ...row.env, ...(read.exit === undefined ? read.shape.fill : {}) },
          };
        });
        report = await askTorchParser<TorchReading>(root.path, ['--derive'], requests);
      }, 180_000);

      it(`is torch ${version}`, () => {
        expect(report.torch).toMatch(new RegExp(`^${version.replace('.', '\\.')}\\.`));
      });

      it.each(TITLED)('$title', ({ row, index }) => {
        const our = ours[index] as OurReading;
        const theirs = report.results[index] as TorchReading;
        const seen = { today: ourWords(our), torch: theirWords(theirs) };
        const marked = row.differs?.find((difference) => difference.versions.includes(version));
        if (marked === undefined) {
          expect(agrees(our, theirs), `${row.argv.join(' ')}: ${JSON.stringify(seen)}`).toBe(true);
        } else {
          expect(
            seen,
            `nccl-run or torch now reads it otherwise than the row's differs says`,
          ).toEqual({
            today: marked.today,
            torch: marked.torch,
          });
          expect(agrees(our, theirs)).toBe(false);
        }
      });
    },
  );
}
