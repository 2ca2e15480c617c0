/**
 * SPEC "Causes users meet": two interfaces in one subnet where the kernel
 * sends from the other one (NVIDIA/nccl#1581: two routes to one /20, their
 * order differing node to node). --verify local's route warning is
 * explain's too, and check says it once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { factsPath } from '../fixtures/facts/facts-fixtures.js';
import { BIN } from '../fixtures/nccl-run-process.js';

const cwd = mkdtempSync(join(tmpdir(), 'dp-route-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const job = ['--nnodes=2', '--node_rank=1', '--master_addr=198.18.10.1', '--master_port=29500'];
const run = async (argv: string[]) => {
  const result = await execa(
    BIN,
    [...argv, '--facts', factsPath('two-nics-one-subnet'), ...job, 'train.py'],
    { reject: false, cwd, extendEnv: false, env: { PATH: process.env.PATH ?? '', HOME: cwd } },
  );
  return JSON.parse(String(result.stdout)) as { warnings: string[] };
};

it('explain warns of the route through the other NIC, as check --verify local does, once', async () => {
  const explained = await run(['explain', '--json', '--verify', 'none']);
  const checked = await run(['check', '--json', '--verify', 'local']);
  const route =
    /^the route to the master 198\.18\.10\.1 leaves through eno1, not the chosen ens3f0; routes covering it: 198\.18\.10\.0\/24 dev eno1 metric 100; 198\.18\.10\.0\/24 dev ens3f0 metric 101$/;
  expect(explained.warnings.filter((w) => route.test(w))).toHaveLength(1);
  expect(checked.warnings).toEqual(explained.warnings);
});
