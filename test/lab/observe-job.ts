/**
 * What the e2e tests observe of a running two-node job, for both torch
 * tiers: the workers' sockets as `ss -tnp` lists them, a line in a node's
 * output, the processes left on a node, and the kernel's byte counters of
 * both links. Each waits on observable state, never on a sleep.
 */
import { readFile } from 'node:fs/promises';
import type { NodeName, TwoNodeLab } from './two-node.js';

export interface Socket {
  local: string;
  peer: string;
  process: string;
}

/**
 * Established TCP connections owned by the node's workers (torchrun starts
 * them as python3.11 on Debian 12, python3.13 in the Debian 13 root).
 */
export async function workerSockets(lab: TwoNodeLab, node: NodeName): Promise<Socket[]> {
  const lines = await lab.tcpConnections(node);
  return lines
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[0] === 'ESTAB' && /users:\(\("python3/.test(fields[5] ?? ''))
    .map((fields) => ({ local: fields[3] ?? '', peer: fields[4] ?? '', process: fields[5] ?? '' }));
}

/** Waits for rank 0's report (the workers then hold their sockets open) and lists them. */
export async function workerSocketsWhenReported(
  lab: TwoNodeLab,
  output: NodeJS.ReadableStream | undefined,
  node: NodeName,
): Promise<Socket[]> {
  await outputMatches(output, /\{"ranks"/, 60_000);
  return workerSockets(lab, node);
}

/** Resolves once the stream's output so far matches `pattern`; rejects with that output after `timeoutMs`. */
export function outputMatches(
  output: NodeJS.ReadableStream | undefined,
  pattern: RegExp,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!output) {
      reject(new Error('no output stream to watch'));
      return;
    }
    let seen = '';
    const timer = setTimeout(() => {
      output.off('data', onData);
      reject(
        new Error(`no ${pattern} within ${timeoutMs} ms; output so far:\n${seen.slice(-4000)}`),
      );
    }, timeoutMs);
    const onData = (chunk: Buffer | string) => {
      seen += String(chunk);
      if (pattern.test(seen)) {
        clearTimeout(timer);
        output.off('data', onData);
        resolve();
      }
    };
    output.on('data', onData);
  });
}

/** The command names (/proc/PID/comm) of every process on the node. */
export async function processNames(lab: TwoNodeLab, node: NodeName): Promise<string[]> {
  const names = await Promise.all(
    (await lab.pids(node)).map((pid) =>
      readFile(`/proc/${pid}/comm`, 'utf8').then(
        (comm) => comm.trim(),
        () => '',
      ),
    ),
  );
  return names.filter(Boolean);
}

/** Bytes each node has sent so far on its data and its management link. */
export async function txCounters(lab: TwoNodeLab) {
  const read = async (node: NodeName) => ({
    data: await lab.txBytes(node, lab.node(node).dataIface),
    mgmt: await lab.txBytes(node, lab.node(node).mgmtIface),
  });
  return { A: await read('A'), B: await read('B') };
}
