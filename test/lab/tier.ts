/**
 * Test tiers that say what they skipped (issue 9): a tier that cannot run
 * here is skipped with its reason in the suite's name, so the reporter
 * prints why; under CI=true a tier that cannot run fails instead, since CI
 * installs everything every tier needs and a silent skip there would hide a
 * broken install step.
 */
import { describe, it } from 'vitest';

type Body = () => void;

/**
 * `describe(title, body)` when `unavailable` is null; otherwise a suite named
 * "title (skipped: reason)" that is skipped, or, under CI=true, one failing
 * test that says the tier could not run and why.
 */
export function tier(title: string, unavailable: string | null, body: Body): void {
  if (unavailable === null) {
    describe(title, body);
  } else if (process.env.CI === 'true') {
    describe(title, () => {
      it(`cannot run under CI: ${unavailable}`, () => {
        throw new Error(`${title}: this tier must run under CI=true, but ${unavailable}`);
      });
    });
  } else {
    describe.skip(`${title} (skipped: ${unavailable})`, body);
  }
}

/** One test of a tier, by the same rule: skipped with its reason named, failing under CI=true. */
export function tierTest(
  title: string,
  unavailable: string | null,
  body: () => Promise<void>,
): void {
  if (unavailable === null) it(title, body);
  else if (process.env.CI === 'true') {
    it(`${title}: cannot run under CI`, () => {
      throw new Error(`${title}: this test must run under CI=true, but ${unavailable}`);
    });
  } else it.skip(`${title} (skipped: ${unavailable})`, body);
}
