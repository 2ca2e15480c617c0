/**
 * The GPU check's report (test/device/report.ts) on a work folder laid out
 * as gpu-check.sh leaves it after a run on the device machine where every
 * check holds: what it prints, what it writes to $OUT (7 files: with
 * gpu-check.sh's work.tar.gz, the device tool's 8), and its exit status. The rehearsal on Gloo
 * (test/e2e/gpu-check-rehearsal.test.ts) runs the same report on real runs
 * without NCCL; this is the run with it, which only the GPU machine makes.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { report } from '../../device/report.js';

const SITE = '/opt/torch/.venv/lib/python3.12/site-packages';
let top = '';
afterEach(() => {
  rmSync(top, { recursive: true, force: true });
  vi.restoreAllMocks();
});

function files(entries: Record<string, string>): { work: string; out: string } {
  top = mkdtempSync(join(tmpdir(), 'device-report-'));
  const work = join(top, 'work');
  for (const [path, text] of Object.entries(entries)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  const out = join(top, 'out');
  mkdirSync(out);
  return { work, out };
}

const explain = (node: number, decision: string, unmanaged: string) =>
  JSON.stringify({
    decision: { interface: decision, address: `198.18.0.${node + 1}`, strategy: 'subnet' },
    unmanaged: { nccl: { interface: unmanaged, address: `198.18.10${node}.1` }, gloo: null },
    torch: { version: '2.11.0+cu130', source: `${SITE}/torch/version.py` },
    nccl: {
      version: '2.28.9',
      source: `${SITE}/nvidia_nccl_cu13-2.28.9.dist-info`,
      library: `${SITE}/nvidia/nccl/lib/libnccl.so.2`,
      rules: '2.28+',
    },
  });

const ncclLog = (node: number, name: string, address: string) =>
  [
    `h200:47${node}1:47${node}1 [0] NCCL INFO NCCL_HOSTID set by environment to gpu-check-node${node}`,
    `h200:47${node}1:47${node}1 [0] NCCL INFO Bootstrap: Using ${name}:${address}<0>`,
    ...(node === 0 ? ['h200:4701:4701 [0] NCCL INFO NCCL version 2.28.9+cuda13.0'] : []),
    `h200:47${node}1:47${node}9 [0] NCCL INFO NET/Socket : Using [0]${name}:${address}<0>`,
    `h200:47${node}1:47${node}9 [0] NCCL INFO Channel 00/0 : ${1 - node}[0] -> ${node}[0] [receive] via NET/Socket/0`,
    `h200:47${node}1:47${node}9 [0] NCCL INFO Channel 00/0 : ${node}[0] -> ${1 - node}[0] [send] via NET/Socket/0`,
  ].join('\n');

const agent = (node: number, ifname: string | null) =>
  [
    '[12:00:00] INFO (nccl-run): using ...',
    `GPU_CHECK_ENV ${JSON.stringify({ NCCL_SOCKET_IFNAME: ifname && `=${ifname}`, pid: 9000 + node })}`,
    ...(ifname === null
      ? []
      : [
          `GPU_CHECK_RESULT ${JSON.stringify({ rank: node, ranks: 2, bytes: 268435456, iters: 5, seconds: 0.1, correct: true })}`,
        ]),
  ].join('\n');

/** A run where both agents ran through nccl-run on ens3f0. */
function passingRun(name: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const node of [0, 1]) {
    entries[`runs/${name}/agent${node}.log`] = agent(node, 'ens3f0');
    entries[`runs/${name}/exit${node}`] = '0\n';
    entries[`runs/${name}/explain-node${node}.json`] = explain(node, 'ens3f0', 'eno1');
    entries[`runs/${name}/nccl-node${node}.${4700 + node}.log`] = ncclLog(
      node,
      'ens3f0',
      `198.18.0.${node + 1}`,
    );
  }
  return entries;
}

it("a run where every check holds: exit 0, the table, NCCL's lines, the figures, 7 files", () => {
  const { work, out } = files({
    'prereqs.tsv': 'GPU\tok\tNVIDIA H200, 143771 MiB, 580.159.03\nnode\tok\tv22.23.5, carried\n',
    'launcher.txt': '/opt/torch/.venv/bin/torchrun\n/opt/torch/.venv/bin/python3\n',
    'stack.json': JSON.stringify({
      executable: '/opt/torch/.venv/bin/python3',
      prefix: '/opt/torch/.venv',
      basePrefix: '/usr',
      torch: '2.11.0+cu130',
      torchFile: `${SITE}/torch/__init__.py`,
      cuda: '13.0',
      ncclRuntime: '2.28.9',
      ncclWheel: {
        name: 'nvidia-nccl-cu13',
        version: '2.28.9',
        distInfo: `${SITE}/nvidia_nccl_cu13-2.28.9.dist-info`,
      },
      loadedNccl: [`${SITE}/nvidia/nccl/lib/libnccl.so.2`],
    }),
    ...passingRun('datapath'),
    ...passingRun('trap-nccl-run'),
    'runs/trap-alone/agent0.log': agent(0, null),
    'runs/trap-alone/agent1.log': agent(1, null),
    'runs/trap-alone/exit0': '143\n',
    'runs/trap-alone/stopped0': "stopped 15 s after node 1's agent had failed\n",
    'runs/trap-alone/exit1': '1\n',
    'runs/trap-alone/explain-node0.json': explain(0, 'ens3f0', 'eno1'),
    'runs/trap-alone/explain-node1.json': explain(1, 'ens3f0', 'eno1'),
    'runs/trap-alone/nccl-node0.4801.log':
      'h:1:1 [0] NCCL INFO Bootstrap: Using eno1:198.18.100.1<0>',
    'runs/trap-alone/nccl-node1.4811.log': [
      'h:2:2 [0] NCCL INFO Bootstrap: Using eno1:198.18.101.1<0>',
      '',
      '[2026-11-20 10:00:00] h:2:2 [0] misc/socket.cc:596 NCCL WARN socketStartConnect: connect to 198.18.100.1<36473> failed : Network is unreachable',
    ].join('\n'),
    'netns.txt': 'kernel: Linux 4.4.0\nallowed ip link add type veth\nup: gc1-n0 and gc1-n1\n',
  });
  const printed = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);

  expect(report(work, out)).toBe(0);
  const summary = readFileSync(join(out, 'summary.txt'), 'utf8');
  expect(printed).toHaveBeenCalledWith(`${summary}`);
  expect(summary).not.toMatch(/ FAIL /);
  expect(summary).toMatch(/^a\) NCCL library +PASS /m);
  expect(summary).toMatch(/^b\) data path: channels +PASS +node 0: 2 via NET\/Socket on ens3f0/m);
  expect(summary).toMatch(
    /^c\) trap: NCCL alone +PASS +failed, as a job on the trap does: node 0 stopped/m,
  );
  expect(summary).toContain(
    '  h200:4701:4709 [0] NCCL INFO NET/Socket : Using [0]ens3f0:198.18.0.1<0>',
  );
  expect(summary).toContain(
    'algBw 2.68 GB/s, busBw 2.68 GB/s (busBw = algBw × 2(n−1)/n, as nccl-tests)',
  );
  expect(readdirSync(out).sort()).toEqual([
    'datapath.log',
    'explain.json',
    'netns.txt',
    'report.json',
    'summary.txt',
    'trap-alone.log',
    'trap-nccl-run.log',
  ]);
  expect(readFileSync(join(out, 'datapath.log'), 'utf8')).toContain(
    '==> node 1: nccl-node1.4701.log <==',
  );
});

it('a machine that made no lab: the trap is a skip naming the refusal, not a failure', () => {
  const { work, out } = files({
    ...passingRun('datapath'),
    'netns.txt': 'kernel: Linux 4.4.0\nrefused ip netns: mount --make-shared /run/netns failed\n',
  });
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);

  report(work, out);
  const summary = readFileSync(join(out, 'summary.txt'), 'utf8');
  expect(summary).toMatch(
    /^c\) trap +SKIP +this machine made no lab: refused ip netns: mount --make-shared \/run\/netns failed$/m,
  );
  // No stack.json: the stack is one failed row saying what is missing.
  expect(summary).toMatch(/^a\) stack +FAIL +missing: stack\.json \(not made\)$/m);
});
