/**
 * The descriptor check as a table: the store host's connections (one per
 * agent and per worker) are certain, a socket-transport worker's all-to-all
 * connections possible.
 */
import { describe, expect, it } from 'vitest';
import { findingOf, jobNeeds, nodeFacts } from '../../fixtures/readiness.js';

const nofile = (soft: number, hard = soft) => ({ nofile: { soft, hard } });

describe('nofile', () => {
  it.each([
    // what, level, soft limit, needs
    [
      'a store host of 100 nodes × 8 at 1024',
      'ok',
      nofile(1024),
      { storeHost: true, nnodes: { min: 100, max: 100 } },
    ],
    [
      'a store host of 120 nodes × 8 at 1024 (1084 needed)',
      'refused',
      nofile(1024),
      { storeHost: true, nnodes: { min: 120, max: 120 } },
    ],
    [
      'the same node, not the store host, on IB',
      'ok',
      nofile(1024),
      { nnodes: { min: 120, max: 120 } },
    ],
    [
      'an elastic 100:120 store host at 1024',
      'warning',
      nofile(1024),
      { storeHost: true, nnodes: { min: 100, max: 120 } },
    ],
    [
      'sockets, 64 nodes × 8 at 1024 (504 remote ranks)',
      'warning',
      nofile(1024),
      { transport: 'socket', nnodes: { min: 64, max: 64 } },
    ],
    [
      'sockets, 32 nodes × 8 at 1024 (248 remote ranks)',
      'ok',
      nofile(1024),
      { transport: 'socket', nnodes: { min: 32, max: 32 } },
    ],
    [
      'sockets on AWS ENA, 8 nodes × 8 at 1024 (17 sockets a connection)',
      'warning',
      {
        ...nofile(1024),
        network: {
          interface: 'ens5',
          mtu: 9001,
          vendor: '0x1d0f',
          rpFilter: { all: 0, interface: 0 },
        },
      },
      { transport: 'socket', nnodes: { min: 8, max: 8 } },
    ],
    [
      'sockets, 4 nodes × 8, NCCL_NSOCKS_PERTHREAD=8 NCCL_SOCKET_NTHREADS=4',
      'warning',
      nofile(1024),
      {
        transport: 'socket',
        nnodes: { min: 4, max: 4 },
        ncclEnv: { NCCL_NSOCKS_PERTHREAD: '8', NCCL_SOCKET_NTHREADS: '4' },
      },
    ],
    ['unreadable', 'ok', { nofile: null }, { storeHost: true }],
  ] as const)('%s: %s', (_, level, node, needs) => {
    expect(findingOf('nofile', jobNeeds(needs), nodeFacts(node)).level).toBe(level);
  });

  it("names the store host's count and a limit the hard one allows", () => {
    const finding = findingOf(
      'nofile',
      jobNeeds({ storeHost: true, nnodes: { min: 120, max: 120 } }),
      nodeFacts({ ...nofile(1024, 524288), contexts: ['docker'] }),
    );
    expect(finding).toMatchObject({
      level: 'refused',
      evidence:
        'open files limit 1024 (ulimit -n; hard 524288); this node hosts the rendezvous store, which holds a connection from each agent and each worker: 1084 descriptors with 120 nodes × (1 agent + 8 workers)',
      fix: 'ulimit -n 524288 before nccl-run (the hard limit allows it), or docker run --ulimit nofile=1084:1084; compose: ulimits: { nofile: 1084 }',
    });
  });

  it('names the all-to-all estimate of a socket worker', () => {
    const finding = findingOf(
      'nofile',
      jobNeeds({ transport: 'socket', nnodes: { min: 64, max: 64 } }),
      nodeFacts(nofile(1024)),
    );
    expect(finding.evidence).toBe(
      "open files limit 1024 (ulimit -n; hard 1024); with NCCL's socket transport a worker that exchanges with all 504 remote ranks (all-to-all, send/recv) opens 504 × 2 connections of 1 socket: about 1072 descriptors",
    );
    expect(finding.fix).toBe(
      '"* - nofile 1072" in /etc/security/limits.conf (LimitNOFILE for a systemd service)',
    );
  });
});
