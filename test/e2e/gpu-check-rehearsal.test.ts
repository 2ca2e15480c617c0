/**
 * The GPU check's steps, rehearsed here without a GPU (issue 31): the same
 * gpu-check.sh the device machine runs, with GPU_CHECK_REHEARSAL=gloo, on
 * Debian 12's real torchrun 1.13 (Gloo, CPU). Every step runs as it will
 * there: the prepared folder (prepare.sh, without Node: the node on PATH
 * serves), the two torchrun agents launched through nccl-run on this machine,
 * the trap lab's namespaces with torchrun alone and through nccl-run, the
 * timeouts, the report and the files it leaves in $OUT. NCCL's own checks
 * fail here by design (Gloo writes no NCCL log); what must hold is
 * everything around them. A run takes about 40 s; torchrun alone on the trap,
 * which Gloo leaves hanging, is stopped at 15 s (GPU_CHECK_TRAP_ALONE_S; 45 s
 * on the device).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Result } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';
import { torchStack, torchUnavailable } from '../lab/torch-job.js';

const DEVICE = fileURLToPath(new URL('../device/', import.meta.url));

tier(
  'the GPU check rehearsed on Gloo (torchrun 1.13, no GPU)',
  torchUnavailable('1.13') ?? netnsUnavailable,
  () => {
    const top = mkdtempSync(join(tmpdir(), 'gpu-rehearsal-'));
    const out = join(top, 'out');
    let run: Result;
    let summary: string;

    beforeAll(async () => {
      const carried = join(top, 'carried');
      await execa('bash', [join(DEVICE, 'prepare.sh'), '--skip-build', '--skip-node', carried]);
      await execa('mkdir', ['-p', out]);
      run = await execa('bash', [join(DEVICE, 'gpu-check.sh')], {
        env: {
          OUT: out,
          TMPDIR: top,
          GPU_CHECK_CARRIED: carried,
          GPU_CHECK_REHEARSAL: 'gloo',
          GPU_CHECK_TORCHRUN: torchStack('1.13').torchrun.join(' '),
          // Debian 12's torchrun on Python 3.11 needs these (shared/LAB.md).
          GPU_CHECK_TORCHRUN_ARGS: '--redirects 1 --tee 1',
          GPU_CHECK_MB: '8',
          // Gloo alone on the trap hangs until the limit, whatever it is: 15 s here, 45 on the device.
          GPU_CHECK_TRAP_ALONE_S: '15',
        },
        reject: false,
        timeout: 170_000,
      });
      summary = readFileSync(join(out, 'summary.txt'), 'utf8');
    }, 175_000);
    afterAll(() => rmSync(top, { recursive: true, force: true }));

    const status = (check: string) =>
      new RegExp(`^${check.replace(/[()]/g, '\\$&')} +(PASS|FAIL|SKIP) `, 'm').exec(summary)?.[1];

    it('prerequisites first, then the runs; exit 1, since NCCL wrote no log', () => {
      expect(run.stdout).toMatch(/^GPU +rehearsal +none needed/m);
      expect(run.stdout).toMatch(/^torch +ok +1\.13\./m);
      expect(run.stdout).toMatch(/^datapath: agents exited 0 and 0 in \d+ s$/m);
      // Issue 44's check --verify collective on the same two nodes (Gloo here).
      expect(run.stdout).toMatch(/^collective: checks exited 0 and 0$/m);
      expect(run.stdout).toMatch(/^trap-nccl-run: agents exited 0 and 0 in \d+ s$/m);
      expect(run.exitCode, String(run.stderr)).toBe(1);
      expect(run.stderr).toBe('');
    });

    it('both agents ran through nccl-run, each worker saw its variables, the all_reduce summed', () => {
      for (const label of ['b) data path', 'c) trap via nccl-run']) {
        expect(status(`${label}: exported`)).toBe('PASS');
        expect(status(`${label}: all_reduce`)).toBe('PASS');
        expect(status(`${label}: bootstrap`)).toBe('FAIL');
      }
      expect(summary).toMatch(
        /^c\) trap via nccl-run: exported +PASS +node 0 NCCL_SOCKET_IFNAME==ens3f0, node 1 NCCL_SOCKET_IFNAME==ens3f0$/m,
      );
      expect(summary).toMatch(/sum correct; 8 MiB, 2 ranks, \d timed: .* busBw \d+\.\d\d GB\/s/);
    });

    it('torchrun alone on the trap failed, and was stopped within its timeout', () => {
      expect(status('c) trap: NCCL alone')).toBe('PASS');
      expect(summary).toMatch(
        /^c\) trap: NCCL alone +PASS +failed, as a job on the trap does: node 0 /m,
      );
    });

    it("the stack: nccl-run's reading of torch agrees with torch's own; no NCCL in a CPU torch", () => {
      expect(status('a) torch version')).toBe('PASS');
      expect(status('a) torch source')).toBe('PASS');
      expect(status('a) NCCL version')).toBe('FAIL');
    });

    it('$OUT holds 8 files, the most the device tool brings back; the namespaces are gone', async () => {
      expect(readdirSync(out).sort()).toEqual([
        'datapath.log',
        'explain.json',
        'netns.txt',
        'report.json',
        'summary.txt',
        'trap-alone.log',
        'trap-nccl-run.log',
        'work.tar.gz',
      ]);
      const netns = readFileSync(join(out, 'netns.txt'), 'utf8');
      const lab = /^up: (\S+)-n0 /m.exec(netns)?.[1];
      expect(lab).toBeDefined();
      const { stdout } = await execa('ip', ['netns', 'list']);
      expect(stdout).not.toContain(`${lab}-`);
      const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
      expect(report.runs.datapath).toHaveLength(2);
    });
  },
);
