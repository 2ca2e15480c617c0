/**
 * audit's findings (src/audit/findings.ts) on the fixtures of
 * test/fixtures/nccl-logs, each built from NCCL's format strings at a tag
 * and users' lines in public threads (cited in each file): the trap each
 * shows is found, in that release's spelling, naming its ranks and line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditFindings, hostLocalReason } from '../../../src/audit/findings.js';
import { readNcclLog } from '../../../src/audit/rank-record.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'nccl-logs');

function findingsOf(name: string) {
  const log = readNcclLog([{ source: name, text: readFileSync(join(FIXTURES, name), 'utf8') }]);
  return { log, findings: auditFindings(log) };
}

const failures = (name: string) => findingsOf(name).findings.filter((f) => f.level === 'failure');

describe('auditFindings', () => {
  it('2.18: a veth socket device on a link-local address, its channels through it', () => {
    const { log } = findingsOf('socket-veth-2.18.txt');
    expect(log.ranks.map((r) => r.nccl.version)).toEqual(['2.18.6', '2.18.6']);
    const [veth, ...rest] = failures('socket-veth-2.18.txt');
    expect(rest).toEqual([]);
    expect(veth?.message).toBe(
      "NCCL's socket device [1] is on a link-local address (veth25f2e72 fe80::a8c1:abff:fe12:3456) in a job across hosts; 2 channel(s) go via NET/Socket/1",
    );
    expect(veth?.ranks).toEqual(['rank 1 (gpu-b pid 3307 GPU 0)']);
    expect(veth?.evidence?.text).toMatch(/^1: gpu-b:3307:3340 \[0\] NCCL INFO NET\/Socket : Using/);
  });

  it('2.22: a plugin that is there but cannot load, and the rank on Socket', () => {
    const found = failures('efa-plugin-failed-2.22.txt');
    expect(found.map((f) => f.message)).toEqual([
      'the net plugin did not load or did not initialise, and NCCL fell back to TCP sockets (Using network Socket)',
      'ranks disagree on the network: AWS Libfabric (1), Socket (1)',
    ]);
    expect(found[0]?.ranks).toEqual(['rank 1 (p5-b pid 6001 GPU 0)']);
    expect(found[0]?.evidence?.text).toContain('libfabric.so.1: cannot open shared object file');
  });

  it('2.27: Socket on one host while the other runs IB', () => {
    const found = failures('ib-fallback-2.27.txt');
    expect(found[0]?.message).toBe(
      'NCCL runs on TCP sockets (Socket) where rank 0 (dgx-1 pid 7001 GPU 0) uses network IB: the silent fall-back from RDMA',
    );
    expect(found[0]?.ranks).toEqual(['rank 1 (dgx-2 pid 8001 GPU 0)']);
    expect(found[0]?.evidence?.line).toBe(24);
  });

  it('2.29: a loopback bootstrap across hosts, retries, a timestamped WARN, a rank that never built its network', () => {
    const { findings } = findingsOf('loopback-stuck-2.29.txt');
    expect(findings.map((f) => [f.level, f.message.split(':')[0]])).toEqual([
      ['failure', "NCCL's bootstrap is on loopback (lo 127.0.0.1) in a job across hosts"],
      ['failure', 'never reached `Using network`, which the other ranks did'],
      ['warning', 'NCCL retried connects (2 lines)'],
      ['warning', 'NCCL WARN socketPollConnect'],
    ]);
    expect(findings.every((f) => f.ranks.join() === 'node-b pid 9201 GPU 0')).toBe(true);
  });

  it('2.28: a plugin that loads but does not initialise on one host ("Failed to initialize NET plugin")', () => {
    const found = failures('plugin-init-failed-2.28.txt');
    expect(found[0]?.message).toBe(
      'the net plugin AWS Libfabric did not load or did not initialise, and NCCL fell back to TCP sockets (Using network Socket)',
    );
    expect(found[0]?.ranks).toEqual(['trn-b pid 3101 GPU 0']);
    expect(found[0]?.evidence?.text).toBe(
      'trn-b:3101:3130 [0] NCCL INFO Failed to initialize NET plugin AWS Libfabric',
    );
  });

  it("2.24: both hosts bootstrap on libvirt's virbr0, which is also their socket device [0]", () => {
    expect(failures('bridge-bootstrap-2.24.txt').map((f) => [f.message, f.ranks.length])).toEqual([
      [
        "NCCL's bootstrap is on a container or VM bridge (virbr0 192.168.122.1) in a job across hosts",
        2,
      ],
      [
        "NCCL's socket device [0] is on a container or VM bridge (virbr0 192.168.122.1) in a job across hosts",
        2,
      ],
    ]);
  });

  it('2.26: a healthy IB job has no finding', () => {
    expect(findingsOf('healthy-ib-2.26.txt').findings).toEqual([]);
  });

  it('one host: loopback and a bridge are where the job is, so no finding', () => {
    const text = [
      'solo:1:1 [0] NCCL INFO Bootstrap: Using lo:127.0.0.1<0>',
      'solo:1:2 [0] NCCL INFO Using network Socket',
      'solo:2:2 [1] NCCL INFO Bootstrap: Using lo:127.0.0.1<0>',
      'solo:2:3 [1] NCCL INFO Using network Socket',
      'solo:2:3 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct',
    ].join('\n');
    expect(auditFindings(readNcclLog([{ source: '-', text }]))).toEqual([]);
  });
});

describe('WARN lines', () => {
  it("each message once, with every rank that printed it and that message's own line", () => {
    const text = [
      'a:1:1 [0] misc/cudawrap.cc:190 NCCL WARN Cuda failure 1',
      'a:1:1 [0] init.cc:1701 NCCL WARN Cuda failure 2',
      'b:2:2 [0] init.cc:1701 NCCL WARN Cuda failure 2',
      'b:2:2 [0] init.cc:1701 NCCL WARN Cuda failure 2',
    ].join('\n');
    const findings = auditFindings(readNcclLog([{ source: 'w', text }])).filter((f) =>
      f.message.startsWith('NCCL WARN'),
    );
    expect(findings.map((f) => [f.message, f.ranks.length, f.evidence?.line])).toEqual([
      ['NCCL WARN Cuda failure 1', 1, 1],
      ['NCCL WARN Cuda failure 2', 2, 2],
    ]);
  });
});

describe('hostLocalReason', () => {
  it.each([
    [{ interface: 'lo', address: '127.0.0.1' }, 'loopback'],
    [{ interface: 'eth0', address: '::1' }, 'loopback'],
    [{ interface: 'eth0', address: '169.254.3.1' }, 'a link-local address'],
    [{ interface: 'docker0', address: '172.17.0.1' }, 'a container or VM bridge'],
    [{ interface: 'br-5f3a9c1d', address: '203.0.113.65' }, 'a container or VM bridge'],
    [{ interface: 'virbr0', address: '192.168.122.1' }, 'a container or VM bridge'],
    [{ interface: 'eth1', address: '198.18.2.5' }, null],
  ])('%o → %s', (bound, reason) => {
    expect(hostLocalReason(bound)).toBe(reason);
  });
});
