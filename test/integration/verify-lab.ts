/**
 * Helpers for the verification tests in lab namespaces: run verify() "on" a
 * host through test/fixtures/verify-runner.ts, and stand up a TCP listener
 * there. Every wait is bounded.
 */
import type { RunnerArgs, RunnerPrinted } from '../fixtures/verify-runner.js';
import type { Lab } from '../lab/netns.js';

/** What the runner printed, its exit status and its logs. */
export interface RunnerResult extends RunnerPrinted {
  code: number;
  /** pino's JSON lines, parsed. */
  logs: { level: number; msg: string }[];
}

/** Node and tsx start-up inside a namespace, on a loaded 2-core machine. */
const STARTUP_ALLOWANCE_MS = 20_000;

export function startVerify(
  lab: Lab,
  host: string,
  args: RunnerArgs,
): { started: Promise<void>; done: Promise<RunnerResult> } {
  const child = lab.exec(
    host,
    'node',
    ['--import', 'tsx', 'test/fixtures/verify-runner.ts', JSON.stringify(args)],
    {
      reject: false,
      timeout: args.timeoutMs + STARTUP_ALLOWANCE_MS,
    },
  );
  let stderr = '';
  const started = new Promise<void>((resolve) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('runner: verifying\n')) resolve();
    });
  });
  const done = child.then((result) => {
    const stdout = String(result.stdout).trim();
    if (stdout === '') {
      throw new Error(
        `verify-runner on ${host} printed nothing (exit ${result.exitCode}): ${stderr}`,
      );
    }
    const printed = JSON.parse(stdout) as RunnerPrinted;
    const logs = stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    return { ...printed, code: result.exitCode ?? -1, logs };
  });
  return { started, done };
}

export function runVerify(lab: Lab, host: string, args: RunnerArgs): Promise<RunnerResult> {
  return startVerify(lab, host, args).done;
}

/**
 * A plain TCP listener inside a host (a stand-in for torchrun's store): it
 * accepts and closes. Resolves once it listens.
 */
export async function listenInside(
  lab: Lab,
  host: string,
  address: string,
  port: number,
): Promise<{ stop(): void }> {
  const script = `require('node:net').createServer((s) => s.destroy()).listen(${port}, ${JSON.stringify(address)}, () => console.log('listening'))`;
  const child = lab.exec(host, 'node', ['-e', script], { reject: false, timeout: 120_000 });
  await new Promise<void>((resolve, reject) => {
    const guard = setTimeout(
      () => reject(new Error(`listener on ${host} ${address}:${port} did not start`)),
      15_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) {
        clearTimeout(guard);
        resolve();
      }
    });
  });
  return { stop: () => child.kill('SIGKILL') };
}

/** `iptables ARGS` inside a host. */
export async function iptables(lab: Lab, host: string, ...args: string[]): Promise<void> {
  await lab.exec(host, 'iptables', args, { timeout: 10_000 });
}
