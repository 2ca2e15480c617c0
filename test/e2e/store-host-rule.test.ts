/**
 * torch's c10d store-host rule against torch itself (SPEC "What it exports",
 * issue 20): the real `_matches_machine_hostname` of torch 1.13 (Debian 12),
 * 2.6 (Debian 13) and 2.14.1 (Debian sid), asked in a namespace whose
 * /etc/hosts maps the hostname to a management address, a data name to
 * another address and a second name to the hostname's address, must answer
 * every endpoint as nccl-run's matchesMachineHostname and that torch's
 * record (src/torch/releases.ts) do, given the same names and addresses.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { releaseFor } from '../../src/torch/release-for.js';
import {
  hostsStore,
  type MachineNames,
  matchesMachineHostname,
} from '../../src/torch/store-host-rule.js';
import { inRoot, labRoot, type Suite } from '../lab/debian-root.js';
import { HOST_TORCHRUN, torchrunInterpreter, torchrunVersion } from '../lab/host-torchrun.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const HOSTNAME = 'trainer-0';
const HOSTS = [
  '127.0.0.1 localhost',
  `203.0.113.40 ${HOSTNAME}.cluster ${HOSTNAME}`,
  '198.18.40.1 trainer-0-data',
  '203.0.113.40 trainer-0-mgmt',
  '198.18.40.2 trainer-1',
  '',
].join('\n');
/** What getaddrinfo gives each name under HOSTS; an address literal is itself. */
const RESOLVES: Record<string, string[]> = {
  localhost: ['127.0.0.1'],
  [HOSTNAME]: ['203.0.113.40'],
  [`${HOSTNAME}.cluster`]: ['203.0.113.40'],
  'trainer-0-data': ['198.18.40.1'],
  'trainer-0-mgmt': ['203.0.113.40'],
  'trainer-1': ['198.18.40.2'],
};
const MACHINE: MachineNames = {
  hostname: HOSTNAME,
  addresses: ['203.0.113.40'],
  // getaddrinfo(hostname, AI_CANONNAME) under /etc/hosts: the line's first name.
  canonicalName: `${HOSTNAME}.cluster`,
};
const ENDPOINTS = [
  ...Object.keys(RESOLVES),
  '127.0.0.1',
  '127.0.1.1',
  '::1',
  '203.0.113.40',
  '198.18.40.1',
  '198.18.40.2',
];

const ASK = `
import json, sys
import torch
from torch.distributed.elastic.rendezvous.utils import _matches_machine_hostname
print(json.dumps({"torch": torch.__version__, "answers": [_matches_machine_hostname(h) for h in json.load(sys.stdin)]}))
`;

const STACKS: { torch: string; suite: Suite }[] = [
  { torch: '1.13', suite: 'bookworm' },
  { torch: '2.6', suite: 'trixie' },
  { torch: '2.14', suite: 'sid' },
];

/** The root holding `torch`'s torchrun: the host when it is that version, else the lab root. */
function rootOf(torch: string, suite: Suite): { path: string } | { error: string } {
  if (existsSync(HOST_TORCHRUN) && torchrunVersion() === torch) return { path: '/' };
  return labRoot(suite);
}

for (const stack of STACKS) {
  const root = netnsUnavailable === null ? rootOf(stack.torch, stack.suite) : null;
  const unavailable = netnsUnavailable ?? (root !== null && 'error' in root ? root.error : null);

  tier(`torch ${stack.torch}'s own store-host rule agrees with nccl-run's`, unavailable, () => {
    const lab = new Lab(`sh${stack.torch.replace('.', '')}`);
    let report: { torch: string; answers: boolean[] };

    beforeAll(async () => {
      await lab.host('a', HOSTS);
      const path = (root as { path: string }).path;
      const torchrun = path === '/' ? HOST_TORCHRUN : `${path}${HOST_TORCHRUN}`;
      const python = torchrunInterpreter(torchrun) ?? '/usr/bin/python3';
      const [command, ...args] = inRoot(path, HOSTNAME, python, ['-c', ASK]);
      const run = await lab.exec('a', command as string, args, {
        input: JSON.stringify(ENDPOINTS),
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' },
        extendEnv: false,
        timeout: 120_000,
      });
      report = JSON.parse(String(run.stdout).trim().split('\n').at(-1) as string);
    }, 180_000);
    afterAll(() => lab.cleanup());

    it(`is torch ${stack.torch}`, () => {
      expect(report.torch.startsWith(`${stack.torch}.`)).toBe(true);
    });

    it.each(ENDPOINTS)('%s', (endpoint) => {
      const match = matchesMachineHostname(endpoint, RESOLVES[endpoint] ?? [endpoint], MACHINE);
      const release = releaseFor(stack.torch);
      if (release === null) throw new Error(`no record for torch ${stack.torch}`);
      const ours = hostsStore(match, release);
      expect(ours).toBe(report.answers[ENDPOINTS.indexOf(endpoint)]);
    });
  });
}
