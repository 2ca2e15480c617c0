/**
 * SPEC "Choosing the interface": a `--facts` snapshot replays a user's report
 * faithfully. explain --json records the names the decision resolved on that
 * host (`resolved`), and a replay reads them from the snapshot, never from
 * the machine it runs on: here a master name no resolver here knows.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { factsPath } from '../fixtures/facts/facts-fixtures.js';
import { BIN } from '../fixtures/nccl-run-process.js';

const cwd = mkdtempSync(join(tmpdir(), 'dp-replay-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const explain = async (facts: string, master: string) => {
  const run = await execa(
    BIN,
    [
      'explain',
      '--json',
      '--verify',
      'none',
      '--facts',
      facts,
      ...['--nnodes=2', '--node_rank=1', `--master_addr=${master}`, '--master_port=29500'],
      'train.py',
    ],
    { reject: false, cwd, extendEnv: false, env: { PATH: process.env.PATH ?? '', HOME: cwd } },
  );
  return {
    exitCode: run.exitCode,
    json: JSON.parse(String(run.stdout) || '{}'),
    stderr: run.stderr,
  };
};

it("resolves the master and the hostname as the snapshot's host did, and prints them again", async () => {
  const snapshot = JSON.parse(readFileSync(factsPath('two-nics-one-subnet'), 'utf8'));
  snapshot.resolved = {
    'two-nic-node': ['198.18.10.6'],
    'trainer-0.dp-replay.invalid': ['198.18.10.1'],
  };
  const file = join(cwd, 'snapshot.json');
  writeFileSync(file, JSON.stringify(snapshot));
  const replay = await explain(file, 'trainer-0.dp-replay.invalid');
  expect(replay.exitCode, replay.stderr).toBe(0);
  expect(replay.json.master.addresses).toEqual(['198.18.10.1']);
  expect(replay.json.resolved).toEqual(snapshot.resolved);
  // Gloo resolves the hostname: as the snapshot's host did, to ens3f0's address.
  expect(replay.json.unmanaged.gloo).toEqual({ interface: 'ens3f0', address: '198.18.10.6' });
});

it('a name the snapshot did not see is not resolved from its record (exit 68 where it resolves nowhere)', async () => {
  const replay = await explain(factsPath('two-nics-one-subnet'), 'trainer-1.dp-replay.invalid');
  expect(replay.exitCode).toBe(68);
});
