/**
 * The settings lint held to the real NCCL (SPEC "Outputs", settings lint):
 * the lab roots' libnccl (Debian 13's 2.22.3, sid's 2.29.7; shared/LAB.md).
 *
 * 1. The parameter record of each release (src/nccl/params/nccl-params.ts,
 *    read from NVIDIA/nccl's source at the tags) is the set of NCCL_* names
 *    compiled into that release's library: every NCCL_PARAM name and every
 *    string given to ncclGetEnv is a whole C string in its .rodata. The one
 *    name the record holds beyond the library is NCCL_PROXY_PROFILE, read
 *    only in a build with -DPROFILE_PROXY (src/misc/profiler.cc at
 *    v2.22.3-1; Debian builds without it).
 * 2. With NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV, NCCL echoes the settings it
 *    reads (`NCCL_GDRCOPY_ENABLE set by environment to 0.`, src/misc/param.cc
 *    ncclLoadParam; `NCCL_SOCKET_IFNAME set by environment to lo`,
 *    ncclGetEnv's callers) as ncclGetUniqueId runs, and says nothing of a
 *    misspelt one; the lint flags the misspelt one only.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parametersOf } from '../../src/nccl/params/release-parameters.js';
import { lintNcclSettings } from '../../src/nccl/settings-lint.js';
import { labRoot, type Suite } from '../lab/debian-root.js';
import { ncclBootstrap } from '../lab/nccl-oracle.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const STACKS: { suite: Suite; nccl: string }[] = [
  { suite: 'trixie', nccl: '2.22.3' },
  { suite: 'sid', nccl: '2.29.7' },
];

/** Names the record holds that a release build leaves out (see above). */
const BUILD_FLAG_ONLY = new Set(['NCCL_PROXY_PROFILE']);

/** The NCCL_* names that are whole C strings in a library. */
function namesCompiledIn(library: string): Set<string> {
  const text = readFileSync(library).toString('latin1');
  return new Set(
    [...text.matchAll(/\0(NCCL_[A-Z0-9_]+)(?=\0)/g)].map((match) => match[1] as string),
  );
}

for (const stack of STACKS) {
  const root = netnsUnavailable === null ? labRoot(stack.suite) : null;
  const unavailable = netnsUnavailable ?? (root !== null && 'error' in root ? root.error : null);
  const rootPath = root !== null && 'path' in root ? root.path : '/';

  tier(`the settings lint against the real NCCL ${stack.nccl}`, unavailable, () => {
    const lab = new Lab('lnt');
    beforeAll(() => lab.host('node'), 30_000);
    afterAll(() => lab.cleanup());

    it('its record is the NCCL_* names compiled into the library', () => {
      const library = `${rootPath}/usr/lib/x86_64-linux-gnu/libnccl.so.${stack.nccl}`;
      const compiled = namesCompiledIn(library);
      const record = new Set(parametersOf(stack.nccl));
      expect([...compiled].filter((name) => !record.has(name))).toEqual([]);
      expect(
        [...record].filter((name) => !compiled.has(name) && !BUILD_FLAG_ONLY.has(name)),
      ).toEqual([]);
    });

    it('NCCL echoes the real settings and not the misspelt one, which alone the lint flags', async () => {
      const env = {
        NCCL_DEBUG_SUBSYS: 'INIT,BOOTSTRAP,ENV',
        NCCL_SOCKET_IFNAME: 'lo',
        NCCL_GDRCOPY_ENABLE: '0',
        NCCL_NSOCS_PERTHREAD: '4',
      };
      const { log } = await ncclBootstrap(lab, 'node', rootPath, stack.nccl, env);
      expect(log).toContain('NCCL INFO NCCL_GDRCOPY_ENABLE set by environment to 0.');
      expect(log).toContain('NCCL INFO NCCL_SOCKET_IFNAME set by environment to lo');
      expect(log).not.toContain('NCCL_NSOCS');
      const settings = Object.fromEntries(
        Object.entries(env).map(([name, value]) => [name, { value, where: 'the environment' }]),
      );
      const warnings = lintNcclSettings(settings, stack.nccl);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^NCCL_NSOCS_PERTHREAD .*did you mean NCCL_NSOCKS_PERTHREAD\?$/);
    });
  });
}
