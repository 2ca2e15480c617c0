/**
 * The settings lint through the built CLI (SPEC "Outputs", settings lint):
 * the same warnings in explain, env, check and run --dry-run, for NCCL_*
 * settings from the environment, the env file and NCCL's own configuration
 * file ($NCCL_CONF_FILE, read from NCCL 2.23), each naming where it was set.
 * The job's NCCL is NVIDIA's images' NCCL_VERSION (no libnccl on this host:
 * SPEC "The stack"); the host is a facts fixture, so nothing needs root.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';
import { expectSameVerdicts, fourVerdicts } from '../lab/four-commands.js';

const FACTS = new URL('../fixtures/facts/bond-host.json', import.meta.url).pathname;

describe('the settings lint in every command', () => {
  let cwd = '';
  beforeAll(() => {
    cwd = mkdtempSync(join(tmpdir(), 'lnt-cli-'));
    writeFileSync(join(cwd, 'nccl-run.env'), 'NCCL_PORT_RANGE=50000-51000\n');
    writeFileSync(join(cwd, 'lnt-nccl.conf'), 'NCCL_SOCKET_NTHREADS=32\nNCCL_MNNVL=1\n');
  });
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it('warns alike in explain, env, check and run, naming each setting’s source', async () => {
    const conf = join(cwd, 'lnt-nccl.conf');
    const verdicts = await fourVerdicts(
      async (argv) => {
        const run = await execa(BIN, argv, {
          reject: false,
          cwd,
          extendEnv: false,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: cwd,
            NCCL_VERSION: '2.29.7',
            NCCL_CONF_FILE: conf,
            NCCL_NSOCS_PERTHREAD: '4',
            // Not NCCL's: aws-ofi-nccl's, and nccl-run's own.
            NCCL_OFI_USE_GDRCOPY: '1',
            NCCL_RUN_VERIFY_TIMEOUT: '5',
          },
        });
        return { exitCode: run.exitCode ?? -1, stdout: run.stdout, stderr: run.stderr };
      },
      ['--facts', FACTS, '--standalone', 'train.py'],
    );
    expectSameVerdicts(verdicts);
    const { warnings, exitCode } = verdicts.explain;
    expect(exitCode).toBe(0);
    const lint = warnings.filter((warning) => /^(NCCL|nccl)_\w+(=\S*)? \(set in /.test(warning));
    expect(lint).toEqual(
      expect.arrayContaining([
        'NCCL_NSOCS_PERTHREAD (set in the environment): no NCCL release from 2.18.1 to 2.30.7 reads it, so NCCL ignores it; did you mean NCCL_NSOCKS_PERTHREAD?',
        expect.stringMatching(
          /^NCCL_PORT_RANGE \(set in the env file \S*nccl-run\.env\): no NCCL release from 2\.18\.1 to 2\.30\.7 reads it: NCCL has no port-range setting; .*net\.ipv4\.ip_local_port_range/,
        ),
        `NCCL_MNNVL (set in ${conf}): NCCL read it from 2.20.3 until 2.21.5 dropped it; this job's NCCL 2.29.7 ignores it`,
        `NCCL_SOCKET_NTHREADS=32 (set in ${conf}): NCCL uses at most 16 socket threads and sets it to 16`,
      ]),
    );
    expect(lint).toHaveLength(4);
    expect(warnings.join('\n')).not.toMatch(
      /NCCL_OFI_|NCCL_VERSION \(|NCCL_RUN_|NCCL_CONF_FILE \(/,
    );
  });
});
