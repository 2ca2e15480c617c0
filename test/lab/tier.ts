/**
 * Test tiers that say what they skipped (issue 9): a tier that cannot run
 * here is skipped with its reason in the suite's name, so the reporter
 * prints why; under CI=true a tier that cannot run fails instead, since CI
 * installs everything every tier needs and a silent skip there would hide a
 * broken install step.
 */
import { accessSync, constants } from 'node:fs';
import { describe, it } from 'vitest';

/**
 * A tier's reason not to run for the first of `tools` that is not an
 * executable file here: its own words (what is missing, what installs it); null when all are.
 */
export function firstMissing(
  tools: readonly (readonly [path: string, missing: string])[],
): string | null {
  for (const [path, missing] of tools) {
    try {
      accessSync(path, constants.X_OK);
    } catch {
      return missing;
    }
  }
  return null;
}

type Body = () => void;

const skipped = (title: string, unavailable: string) => `${title} (skipped: ${unavailable})`;

/** Under CI=true, in place of what cannot run: one test that fails and says why. */
function cannotRunUnderCi(title: string, unavailable: string): void {
  it(`${title}: cannot run under CI`, () => {
    throw new Error(`${title}: this must run under CI=true, but ${unavailable}`);
  });
}

/**
 * `describe(title, body)` when `unavailable` is null; otherwise a suite named
 * "title (skipped: reason)" that is skipped, or, under CI=true, one failing
 * test that says the tier could not run and why.
 */
export function tier(title: string, unavailable: string | null, body: Body): void {
  if (unavailable === null) describe(title, body);
  else if (process.env.CI === 'true') describe(title, () => cannotRunUnderCi(title, unavailable));
  else describe.skip(skipped(title, unavailable), body);
}

/** One test of a tier, by the same rule. */
export function tierTest(
  title: string,
  unavailable: string | null,
  body: () => Promise<void>,
): void {
  if (unavailable === null) it(title, body);
  else if (process.env.CI === 'true') cannotRunUnderCi(title, unavailable);
  else it.skip(skipped(title, unavailable), body);
}
