/**
 * `npm run demo` tears the lab down also on Ctrl-C (issue 5). The demo runs
 * on a pseudo-terminal (`script`, LAB.md), and Ctrl-C is typed into it, so
 * the terminal sends SIGINT to the demo and to the torchrun it is running,
 * as it would for a user.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { expect, it } from 'vitest';
import { tier } from '../lab/tier.js';
import { torchUnavailable } from '../lab/torch-job.js';

const DEMO = fileURLToPath(new URL('../../scripts/demo.js', import.meta.url));
const unavailable =
  torchUnavailable('1.13') ??
  (existsSync('/usr/bin/script') ? null : '/usr/bin/script (util-linux) is missing');

/** The demo's namespaces: Lab names them ncr<pid><n>demo-A / -B. */
async function demoNamespaces(): Promise<string[]> {
  const { stdout } = await execa('ip', ['netns', 'list'], { timeout: 10_000 });
  const listed = stdout.split('\n').map((line) => line.split(' ')[0] ?? '');
  const files = existsSync('/etc/netns') ? readdirSync('/etc/netns') : [];
  return [...listed, ...files].filter((name) => /^ncr\d+demo-/.test(name));
}

/** If the demo failed to clean up, the test still must not leave its namespaces behind. */
async function removeLeftovers(before: string[]): Promise<void> {
  for (const name of await demoNamespaces()) {
    if (before.includes(name)) continue;
    const { stdout } = await execa('ip', ['netns', 'pids', name], {
      reject: false,
      timeout: 10_000,
    });
    for (const pid of String(stdout).split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await execa('ip', ['netns', 'del', name], { reject: false, timeout: 10_000 });
    rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
  }
}

tier('npm run demo', unavailable, () => {
  it('Ctrl-C while torchrun runs removes every namespace and /etc/netns file, status 130', async () => {
    const before = await demoNamespaces();
    const demo = spawn('script', ['-eqfc', `${process.execPath} ${DEMO}`, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let during: string[] = [];
    const typedCtrlC = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the demo never started its first job:\n${output}`)),
        60_000,
      );
      demo.stdout.on('data', (chunk: Buffer) => {
        output += String(chunk);
        // The first job's command is printed just before torchrun starts.
        if (output.includes('1. torchrun alone') && output.includes('--master_port')) {
          clearTimeout(timer);
          // Give torchrun time to be running on both nodes, then type Ctrl-C.
          setTimeout(async () => {
            during = await demoNamespaces();
            demo.stdin.write('\x03');
            resolve();
          }, 3_000);
        }
      });
    });
    const exited = new Promise<number | null>((resolve) => demo.on('exit', resolve));
    const bounded = setTimeout(() => demo.kill('SIGKILL'), 90_000);
    try {
      await typedCtrlC;
      const status = await exited;
      // Both namespaces and both /etc/netns folders existed while it ran.
      expect(during.length - before.length).toBe(4);
      expect(status, output).toBe(130);
      expect(output).toMatch(/SIGINT: removing the lab's namespaces/);
      expect(await demoNamespaces()).toEqual(before);
    } finally {
      clearTimeout(bounded);
      demo.kill('SIGKILL');
      await removeLeftovers(before);
    }
  });
});
