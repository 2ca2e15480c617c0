import { defineConfig } from 'vitest/config';

/*
 * Two workers, in two groups. First the e2e tiers, one file at a time (they
 * share the lab's namespaces, podman and the CPU), and beside them the unit
 * tests, which are pure. Then the integration files, one at a time, as
 * before: several of them time real processes and sockets. Vitest's default
 * on two cores is one worker, which ran all three one after another.
 */
export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 0 },
        },
      },
    ],
  },
});
