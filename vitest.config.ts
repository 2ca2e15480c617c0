import { defineConfig } from 'vitest/config';

/*
 * One pool of two workers for the whole run (vitest 3.2 sizes its forks pool
 * from this root config; a project's own fileParallelism or maxWorkers does
 * not limit a shared pool, and its default on two cores is one worker, which
 * ran every file one after another: 15 min of CI). Two groups: first the
 * e2e tiers and the unit tests, then the integration files. The e2e tiers
 * may run two at a time: each makes its own namespaces, daemons and
 * folders, and what they share (a lab root, Docker's and podman's images)
 * is held under a lock (test/lab/lab-root.sh, docker-engine.ts, podman.ts).
 */
export default defineConfig({
  test: {
    maxWorkers: 2,
    // Fails the run if a test left a trace on the host (issue 46).
    globalSetup: ['test/lab/host-traces.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 0 },
        },
      },
    ],
  },
});
