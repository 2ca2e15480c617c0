/**
 * Where the torch that will run is unknown (neither read nor declared: a SIF
 * image, a site's wrapper script), nccl-run reads torchrun's argv leniently
 * and applies the newest record's rules, what current images ship (issue
 * 28). This says, in one warning, what of this job depends on that: each
 * record's own reading of the argv (its job shape, what its parser would
 * refuse) and its c10d store-host rule, where they differ from what was
 * applied. Nothing depends on the version, nothing is said.
 */
import type { ClusterInfo } from '../cluster/scheduler.js';
import type { JobShape } from '../job/job-shape.js';
import { jobShapeOf } from '../job/read-job-shape.js';
import { NEWEST_TORCH } from '../torch/release-for.js';
import { TORCH_RELEASES, type TorchRelease } from '../torch/releases.js';
import { hostsStore, type StoreHostMatch } from '../torch/store-host-rule.js';
import { certainRefusal, parseTorchrunArgs } from '../torch/torchrun-args.js';
import { type TorchEntry, torchrunTable } from '../torch/torchrun-table.js';

export interface UnknownTorchInput {
  /** The launcher's words (--torchrun), and why its torch could not be read. */
  launcher: readonly string[];
  why: string;
  entry: TorchEntry;
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  cluster: ClusterInfo | null;
  /** The job as read by the rules applied (the newest record's). */
  applied: JobShape;
  /** torch's store-host rule asked of this node's c10d endpoint; null where it is not asked. */
  storeHost: StoreHostMatch | null;
}

export function unknownTorchWarning(input: UnknownTorchInput): string | null {
  const differences = new Map<string, string[]>();
  const note = (what: string, release: TorchRelease) =>
    differences.set(what, [...(differences.get(what) ?? []), release.version]);
  for (const release of TORCH_RELEASES) {
    if (release === NEWEST_TORCH) continue;
    const reading = readingOf(input, release);
    if (reading !== jobText(input.applied)) note(reading, release);
    if (
      input.storeHost !== null &&
      hostsStore(input.storeHost, release) !== hostsStore(input.storeHost, NEWEST_TORCH)
    ) {
      note(
        hostsStore(input.storeHost, release)
          ? 'would host the c10d store on this node'
          : 'would host the c10d store on no node (add --rdzv-conf is_host=1 on this node)',
        release,
      );
    }
  }
  if (differences.size === 0) return null;
  const older = [...differences].map(
    ([what, versions]) => `torch ${versions.join(' and ')} ${what}`,
  );
  return `the torch behind ${input.launcher.join(' ')} is unknown (${input.why}): nccl-run reads its arguments as every torch it knows would and applies torch ${NEWEST_TORCH.version}'s rules, what current images ship, but ${older.join('; ')}; say which torch it is with --torch-version`;
}

/** What a torch of `release` makes of the argv: its refusal, or the job it would run. */
function readingOf(input: UnknownTorchInput, release: TorchRelease): string {
  const args = parseTorchrunArgs(input.argv, torchrunTable(`${release.version}.0`, input.entry));
  const refusal = certainRefusal(args, release.version);
  if (refusal !== null) return `would refuse the command (${refusal.message})`;
  try {
    return jobText(jobShapeOf(args, input.env, input.cluster));
  } catch (error) {
    return `would refuse it (${(error as Error).message})`;
  }
}

function jobText(job: JobShape): string {
  const at =
    job.master === null ? 'its own endpoint on localhost' : `${job.master.host}:${job.master.port}`;
  return `would run it as ${job.rdzvBackend} at ${at}`;
}
