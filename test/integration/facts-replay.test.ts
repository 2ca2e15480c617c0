/**
 * SPEC "Choosing the interface": a `--facts` snapshot replays a user's report
 * faithfully. explain --json records the names the decision resolved on that
 * host (`resolved`), and a replay reads them from the snapshot, never from
 * the machine it runs on: here a master name no resolver here knows, and
 * NCCL's configuration files and net plugin gone from this machine.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

/** explain --json with the given environment over PATH and HOME; its JSON. */
const explainWith = async (facts: string, env: Record<string, string>) => {
  const run = await execa(
    BIN,
    [
      ...['explain', '--json', '--verify', 'none', '--facts', facts],
      ...['--nnodes=2', '--node_rank=1', '--master_addr=198.18.10.1', '--master_port=29500'],
      'train.py',
    ],
    {
      reject: false,
      cwd,
      extendEnv: false,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env },
    },
  );
  expect(run.exitCode, String(run.stderr)).toBe(0);
  return { stdout: String(run.stdout), json: JSON.parse(String(run.stdout)) };
};

it("carries NCCL's files and the net plugin as that host had them; a replay where both are gone explains the same", async () => {
  // The snapshot's host: an NCCL_CONF_FILE and a net plugin on LD_LIBRARY_PATH, in a temp prefix.
  const prefix = mkdtempSync(join(tmpdir(), 'dq-replay-prefix-'));
  const conf = join(prefix, 'nccl.conf');
  const plugin = join(prefix, 'lib', 'libnccl-net.so');
  mkdirSync(dirname(plugin));
  writeFileSync(conf, 'NCCL_SOCKET_IFNAME=ens3f0\nNCCL_IB_HCA=mlx5_0\n');
  writeFileSync(plugin, '');
  const env = { NCCL_CONF_FILE: conf, LD_LIBRARY_PATH: dirname(plugin) };
  const taken = await explainWith(factsPath('two-nics-one-subnet'), env).finally(() =>
    rmSync(prefix, { recursive: true, force: true }),
  );
  expect(taken.json.ncclConf).toEqual([
    { file: conf, text: 'NCCL_SOCKET_IFNAME=ens3f0\nNCCL_IB_HCA=mlx5_0\n' },
  ]);
  expect(taken.json.netPlugin).toMatchObject({ name: 'libnccl-net.so', path: plugin });
  expect(taken.json.kept).toEqual({ NCCL_SOCKET_IFNAME: 'ens3f0' });

  const snapshot = join(cwd, 'with-files.json');
  writeFileSync(snapshot, taken.stdout);
  const replayed = await explainWith(snapshot, env);
  expect(replayed.json).toEqual(taken.json);
  // Without the record (the fixture alone), this machine's missing files show: nothing kept, no plugin.
  const bare = await explainWith(factsPath('two-nics-one-subnet'), env);
  expect(bare.json.kept).toEqual({});
  expect(bare.json.netPlugin).toBeNull();
});
