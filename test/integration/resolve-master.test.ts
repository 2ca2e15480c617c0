/**
 * resolveMaster inside a namespace whose /etc/hosts, nsswitch.conf and
 * resolv.conf the test writes (ip netns exec bind-mounts every file of
 * /etc/netns/NS over /etc): names resolve as getaddrinfo, and so torch, sees
 * them on that host. No query leaves the namespace: DNS, where enabled, points
 * at the namespace's own loopback, where nothing listens.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier } from '../lab/tier.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const masterModule = fileURLToPath(new URL('../../src/host/resolve-name.ts', import.meta.url));

const HOSTS = [
  '127.0.0.1 localhost',
  '::1 localhost ip6-localhost',
  // Debian's installer line: the hostname on 127.0.1.1.
  '127.0.1.1 gpu-box',
  '198.18.0.10 trainer-0 trainer-0.lab',
  '2001:db8::10 trainer-0',
  // A repeated line, as hosts files grown by hand have.
  '198.18.0.10 trainer-0',
  '198.18.0.11 trainer-1',
  '',
].join('\n');

interface Answer {
  addresses?: string[];
  error?: string;
  exitCode?: number;
  message?: string;
}

tier('resolveMaster through getaddrinfo in a namespace', netnsUnavailable, () => {
  const lab = new Lab('rmaster');

  beforeAll(async () => {
    // files only: an unknown name is ENOTFOUND at once.
    await lab.host('files', HOSTS);
    writeFileSync(`/etc/netns/${lab.ns('files')}/nsswitch.conf`, 'hosts: files\n');
    // files then DNS, the DNS server being this namespace's loopback with nothing on port 53.
    await lab.host('dns', HOSTS);
    writeFileSync(`/etc/netns/${lab.ns('dns')}/nsswitch.conf`, 'hosts: files dns\n');
    writeFileSync(
      `/etc/netns/${lab.ns('dns')}/resolv.conf`,
      'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n',
    );
  });

  afterAll(async () => {
    await lab.cleanup();
  });

  async function resolveIn(host: string, name: string): Promise<Answer> {
    const script = `
      import { resolveMaster } from ${JSON.stringify(masterModule)};
      try {
        console.log(JSON.stringify({ addresses: await resolveMaster(${JSON.stringify(name)}) }));
      } catch (error) {
        console.log(JSON.stringify({ error: error.name, exitCode: error.exitCode, message: error.message }));
      }`;
    const { stdout } = await lab.exec(
      host,
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: root,
        timeout: 20_000,
      },
    );
    return JSON.parse(String(stdout)) as Answer;
  }

  it('returns every address of a name once, IPv4 and IPv6', async () => {
    const answer = await resolveIn('files', 'trainer-0');
    expect(answer.addresses).toHaveLength(2);
    expect([...(answer.addresses ?? [])].sort()).toEqual(['198.18.0.10', '2001:db8::10']);
  });

  it('reads aliases and single-address names', async () => {
    expect(await resolveIn('files', 'trainer-0.lab')).toMatchObject({
      addresses: expect.arrayContaining(['198.18.0.10']),
    });
    expect(await resolveIn('files', 'trainer-1')).toEqual({ addresses: ['198.18.0.11'] });
  });

  it('gives the 127.0.1.1 of a Debian hostname as it is', async () => {
    expect(await resolveIn('files', 'gpu-box')).toEqual({ addresses: ['127.0.1.1'] });
  });

  it('fails an unknown name with exit 68, naming it and ENOTFOUND', async () => {
    expect(await resolveIn('files', 'trainer-9')).toEqual({
      error: 'UnresolvableMasterError',
      exitCode: 68,
      message:
        "master 'trainer-9' does not resolve (ENOTFOUND: no such name in /etc/hosts or DNS); check the name, /etc/hosts and DNS on this node",
    });
  });

  it('fails with the resolver error when DNS does not answer', async () => {
    const answer = await resolveIn('dns', 'trainer-9');
    // The refused query makes glibc report a temporary failure, not "no such name".
    expect(answer).toEqual({
      error: 'UnresolvableMasterError',
      exitCode: 68,
      message:
        "master 'trainer-9' does not resolve (EAI_AGAIN: temporary failure: DNS did not answer); check the name, /etc/hosts and DNS on this node",
    });
  });

  it('still answers names from /etc/hosts before asking DNS', async () => {
    expect(await resolveIn('dns', 'trainer-1')).toEqual({ addresses: ['198.18.0.11'] });
  });
});
