/**
 * The differential fuzz in the suite (issue 38): one fixed seed's layouts
 * (test/lab/layout-fuzz.ts), each built as a network namespace, and on each
 * the real NCCL 2.22 (Debian 13's root) and 2.29.7 (sid's) against what
 * nccl-run's explain --json says they bind: unmanaged, with nccl-run's
 * variables, and under the layout's kept NCCL_SOCKET_IFNAME spellings
 * (test/lab/nccl-fuzz.ts); and the Gloo device torch 2.6 makes there, by
 * the hostname and under a GLOO_SOCKET_IFNAME, against `unmanaged.gloo`.
 * Any other seed: `npm run fuzz:nccl -- --seed N --layouts M`. A mismatch
 * prints its layout, to replay or to copy into ORACLE_LAYOUTS.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { labRoot } from '../lab/debian-root.js';
import { FUZZ_STACKS, fuzzStacks } from '../lab/fuzz-nccl.js';
import { describeMismatch, type FuzzStack, runFuzz } from '../lab/nccl-fuzz.js';
import { builtUnavailable, snapshotBuild } from '../lab/nccl-oracle.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

/**
 * The suite's seed and size: 1,350 comparisons (824 of them the data-plane
 * device lists, issue 42) in 178 s on this shared 2-core machine under load;
 * 518 comparisons took 29 s on two idle cores before the device lists.
 */
const SEED = 1;
const LAYOUTS = 24;

const roots = (Object.keys(FUZZ_STACKS) as (keyof typeof FUZZ_STACKS)[]).map((suite) =>
  netnsUnavailable === null ? labRoot(suite) : null,
);
const unavailable =
  netnsUnavailable ??
  roots.map((root) => (root !== null && 'error' in root ? root.error : null)).find(Boolean) ??
  builtUnavailable;

tier(
  'the differential fuzz: seeded layouts, nccl-run against the real NCCL 2.22 and 2.29 and Gloo',
  unavailable,
  () => {
    const lab = new Lab('fz');
    let build = '';

    afterAll(async () => {
      await lab.cleanup();
      if (build !== '') rmSync(dirname(build), { recursive: true, force: true });
    });

    it(`seed ${SEED}, ${LAYOUTS} layouts: every comparison agrees`, async () => {
      build = snapshotBuild();
      const stacks = fuzzStacks(['trixie', 'sid']);
      // Gloo's devices are made by the Debian 13 root's torch 2.6.
      const glooRoot = (stacks[0] as FuzzStack).root;
      const result = await runFuzz({ seed: SEED, count: LAYOUTS, stacks, build, lab, glooRoot });
      const kinds = ['unmanaged', 'pick', 'decision', 'devices', 'gloo'].map(
        (what) => `${result.comparisons.filter((c) => c.what === what).length} ${what}`,
      );
      process.stdout.write(
        `\ndifferential fuzz, seed ${SEED}: ${result.layouts} layouts, ${result.comparisons.length} comparisons (${kinds.join(', ')}), ${result.mismatches.length} mismatches, ${result.seconds.toFixed(1)} s\n`,
      );
      // Every layout was asked of both NCCLs and of Gloo; most decided, and refusals are compared too.
      expect(new Set(result.comparisons.map((c) => c.layout)).size).toBe(LAYOUTS);
      expect(result.outcomes.get(0) ?? 0).toBeGreaterThan(LAYOUTS);
      expect(result.outcomes.get(69) ?? 0).toBeGreaterThan(0);
      expect(result.comparisons.filter((c) => c.what === 'gloo')).toHaveLength(2 * LAYOUTS);
      // The device lists: the first device against the real NCCL, the whole list against the source.
      expect(result.comparisons.filter((c) => c.what === 'devices').length).toBeGreaterThan(
        4 * LAYOUTS,
      );
      expect(result.mismatches.map(describeMismatch).join('\n\n')).toBe('');
    }, 600_000);
  },
);
