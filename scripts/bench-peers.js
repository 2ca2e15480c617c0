#!/usr/bin/env node
/**
 * Benchmark section: `--verify peers` on one node with 255 peers (issue 4:
 * "one node checking 255 peers whose probe listeners run on loopback
 * addresses (127.0.x.y): target under 2 seconds").
 *
 * Runs the compiled code (dist/verify/*, so `npm run build` first), in this
 * one process: the node under test is verify() on 127.0.0.1; each of the 255
 * peers (127.0.1.1 … 127.0.1.255) is the real probe listener plus the real
 * dialer reaching back to the node, as a peer's own verify() would. Linux
 * routes all of 127.0.0.0/8 to lo, so every peer has its own address and
 * the node sees 255 distinct sources.
 *
 *   node scripts/bench-peers.js [--runs N]
 * Measured: verify()'s wall time from its call until it has reached all 255
 * peers and been reached by all 255; median of the runs.
 */
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { deadlineIn } from '../dist/verify/clock.js';
import { reachPeer } from '../dist/verify/probe-dial.js';
import { startProbeListener } from '../dist/verify/probe-listener.js';
import { jobToken } from '../dist/verify/probe-token.js';
import { verify } from '../dist/verify/verify.js';
import { median } from './bench-lib.js';

const NAME = '--verify peers, one node and 255 loopback peers, median wall time';
const NODE = '127.0.0.1';
const PEERS = Array.from({ length: 255 }, (_, index) => `127.0.1.${index + 1}`);
const TIMEOUT_MS = 10_000;
/** Each round is 255 listeners and 1,020 connections; a handful of rounds gives a stable median. */
const MAX_RUNS = 10;

export async function peerProbeBench(ctx = { runs: 5 }) {
  const runs = Math.max(1, Math.min(ctx.runs ?? 5, MAX_RUNS));
  const samples = [];
  for (let round = 0; round < runs; round += 1) samples.push(await oneRound());
  return { name: NAME, value: Math.round(median(samples)), unit: 'ms', target: { max: 2000 } };
}

async function oneRound() {
  const port = await freePort();
  const names = [NODE, ...PEERS];
  const token = jobToken({ master: null, jobId: 'bench', peers: names, probePort: port });
  const listeners = await Promise.all(
    PEERS.map((address) =>
      startProbeListener({ address, port, token, maxConnections: 8, onHello: () => {} }),
    ),
  );
  try {
    const started = performance.now();
    const deadline = deadlineIn(TIMEOUT_MS);
    const [report, dials] = await Promise.all([
      verify(nodeInput(names, port)),
      Promise.all(
        PEERS.map((address) =>
          reachPeer({
            target: { address: NODE, port },
            localAddress: address,
            token,
            selfName: address,
            deadline,
            attemptMs: 5_000,
          }),
        ),
      ),
    ]);
    const elapsed = performance.now() - started;
    const failed =
      report.results.filter((result) => !result.ok).length + dials.filter((d) => !d.ok).length;
    if (failed > 0 || report.results.length !== PEERS.length) {
      throw new Error(`${failed} of ${PEERS.length} peers failed the probe`);
    }
    return elapsed;
  } finally {
    await Promise.all(listeners.map((listener) => listener.close()));
  }
}

function nodeInput(peers, probePort) {
  return {
    level: 'peers',
    decision: {
      interface: 'lo',
      address: NODE,
      family: 'ipv4',
      strategy: 'explicit',
      reason: 'bench',
      trace: [],
    },
    job: {
      rdzvBackend: 'static',
      master: null,
      masterAddr: null,
      nnodes: { min: peers.length, max: peers.length, source: 'bench' },
      nodeRank: null,
      standalone: false,
      localAddr: null,
      isHost: null,
      fill: {},
      clusterPeers: [],
      cluster: null,
    },
    facts: {
      hostname: 'bench',
      interfaces: [
        {
          name: 'lo',
          operstate: 'unknown',
          carrier: true,
          addresses: [{ address: NODE, family: 'ipv4', prefixLength: 8, scope: 'host' }],
          speedMbps: null,
          mtu: 65536,
          kind: 'loopback',
          master: null,
          rdma: null,
        },
      ],
      routes: [],
    },
    timeoutMs: TIMEOUT_MS,
    peers,
    probePort,
    logger: pino({ level: 'silent' }),
    routesToMaster: [],
    masterAddresses: [],
    jobId: 'bench',
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, NODE, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
  peerProbeBench({ runs: Number(values.runs) }).then(
    (result) => console.log(JSON.stringify(result)),
    (error) => {
      console.error(error.message);
      process.exitCode = 1;
    },
  );
}
