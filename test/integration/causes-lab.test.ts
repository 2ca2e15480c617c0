/**
 * SPEC "Choosing the interface" ("Causes users meet") and "NCCL's own pick"
 * (data-plane devices) on a real kernel: each cause built in network
 * namespaces (test/lab/netns.ts) and read by the built CLI as a user there
 * runs it, not from a facts fixture. Where the real NCCL can say (the lab
 * root's libnccl2 2.22.3, test/lab/nccl-oracle.ts), its bootstrap pick is
 * compared with the first device nccl-run lists.
 *
 * Addresses: documentation and benchmarking ranges only (198.18.0.0/15),
 * and 169.254.0.0/16 where a link-local address is the point.
 */
import { afterAll, expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';
import { labRoot } from '../lab/debian-root.js';
import { ncclBootstrap } from '../lab/nccl-oracle.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier, tierTest } from '../lab/tier.js';

interface Explained {
  decision: { interface: string; address: string; strategy: string } | null;
  warnings: string[];
  trace: { strategy: string; outcome: string; reason: string }[];
  nccl: { devices: { interface: string; address: string }[] };
  /** The variables nccl-run sets, as the job's NCCL would get them. */
  env: Record<string, string>;
}

const trixie = process.getuid?.() === 0 ? labRoot('trixie') : { error: 'needs root' };
const oracleUnavailable = netnsUnavailable ?? ('error' in trixie ? trixie.error : null);

const job = (master: string) => [
  '--nnodes=2',
  '--node_rank=1',
  `--master_addr=${master}`,
  '--master_port=29500',
];

tier('the causes users meet, on a real kernel', netnsUnavailable, () => {
  const lab = new Lab('dq');
  afterAll(() => lab.cleanup());

  /** nccl-run in `host` with only PATH and `env`; stdout, stderr and its exit status. */
  const cli = async (host: string, argv: string[], env: Record<string, string> = {}) => {
    const result = await lab.exec(host, BIN, argv, {
      reject: false,
      timeout: 20_000,
      extendEnv: false,
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', ...env },
      cwd: '/',
    });
    return { code: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
  };
  const explain = async (host: string, master: string, env: Record<string, string> = {}) => {
    const run = await cli(host, ['explain', '--json', '--verify', 'none', ...job(master)], env);
    return { code: run.code, json: JSON.parse(run.stdout) as Explained };
  };

  /** A veth between `host` and `far`, named on each side as given, both up. */
  const wire = (host: string, name: string, far: string, farName: string) =>
    lab.link(host, name, far, farName);

  it('a kept NCCL_SOCKET_IFNAME=bond0 also takes bond0.2973, link-local only: both listed, the warning says =bond0 (NVIDIA/nccl#177)', async () => {
    await lab.host('bond');
    await lab.host('bondm');
    await wire('bond', 'bond0', 'bondm', 'mb0');
    await wire('bond', 'bond0.2973', 'bondm', 'mb1');
    await lab.addr('bond', 'bond0', '198.18.1.2/24');
    await lab.addr('bondm', 'mb0', '198.18.1.1/24');
    await lab.addr('bond', 'bond0.2973', '169.254.29.73/16');
    const { code, json } = await explain('bond', '198.18.1.1', { NCCL_SOCKET_IFNAME: 'bond0' });
    expect(code).toBe(0);
    expect(json.nccl.devices).toEqual([
      { interface: 'bond0', address: '198.18.1.2' },
      { interface: 'bond0.2973', address: '169.254.29.73' },
    ]);
    const dataPlane = json.warnings.filter((w) => w.includes('[1] bond0.2973 169.254.29.73'));
    expect(dataPlane).toHaveLength(1);
    expect(dataPlane[0]).toMatch(/link-local only.*set NCCL_SOCKET_IFNAME==bond0,/);
  });

  tierTest(
    'the real NCCL 2.22.3 bootstraps on the first device nccl-run lists under NCCL_SOCKET_IFNAME=bond0',
    oracleUnavailable,
    async () => {
      const root = (trixie as { path: string }).path;
      const kept = { NCCL_SOCKET_IFNAME: 'bond0' };
      const { json } = await explain('bond', '198.18.1.1', kept);
      // What the job's NCCL sees: the kept list and what nccl-run exports beside it.
      const nccl = await ncclBootstrap(lab, 'bond', root, '2.22.3', { ...kept, ...json.env });
      expect(nccl.bind, nccl.log).toEqual(json.nccl.devices[0]);
    },
  );

  it('a tailscale0 through which the master is reached is chosen, with the VPN warning; kept, it is not said to miss the master', async () => {
    await lab.host('vpn');
    await lab.host('vpnm');
    await wire('vpn', 'tailscale0', 'vpnm', 'mt');
    await wire('vpn', 'eth0', 'vpnm', 'me');
    // A tailnet's shape: this node's /32 on the tunnel, a route to the peers' range through it.
    await lab.addr('vpn', 'tailscale0', '198.18.50.2/32');
    await lab.addr('vpn', 'eth0', '198.18.60.2/24');
    await lab.ip('vpn', 'route', 'add', '198.19.7.0/24', 'dev', 'tailscale0');
    await lab.addr('vpnm', 'mt', '198.19.7.1/24');
    await lab.ip('vpnm', 'route', 'add', '198.18.50.2/32', 'dev', 'mt');
    const chosen = await explain('vpn', '198.19.7.1');
    expect(chosen.code).toBe(0);
    expect(chosen.json.decision).toMatchObject({ interface: 'tailscale0', address: '198.18.50.2' });
    expect(chosen.json.warnings).toEqual([
      expect.stringMatching(
        /^tailscale0 is a VPN tunnel \(prefix tailscale, excluded by default\), and the master is reached through it, so nccl-run chose it: .*--iface tailscale0 .*--exclude tailscale/,
      ),
    ]);
    const kept = await explain('vpn', '198.19.7.1', { NCCL_SOCKET_IFNAME: 'tailscale0' });
    expect(kept.code).toBe(0);
    expect(kept.json.decision).toMatchObject({ interface: 'tailscale0', strategy: 'explicit' });
    expect(kept.json.warnings.filter((w) => /not reach the master/.test(w))).toEqual([]);
  });

  tierTest(
    'the real NCCL 2.22.3 binds tailscale0 as nccl-run lists it',
    oracleUnavailable,
    async () => {
      const root = (trixie as { path: string }).path;
      const { json } = await explain('vpn', '198.19.7.1');
      // Exactly the variables nccl-run exports for the job.
      const nccl = await ncclBootstrap(lab, 'vpn', root, '2.22.3', json.env);
      expect(nccl.bind, nccl.log).toEqual(json.nccl.devices[0]);
    },
  );

  it('a /32 on lo reached through an unnumbered lan0: the refusal names lo, the address and the fix; --iface lo is 69 (NVIDIA/nccl#1053)', async () => {
    await lab.host('bgp');
    await lab.host('bgpm');
    await wire('bgp', 'lan0', 'bgpm', 'ml');
    await lab.addr('bgp', 'lo', '198.18.90.5/32');
    await lab.addr('bgpm', 'ml', '198.19.90.1/24');
    await lab.ip('bgp', 'route', 'add', '198.19.90.0/24', 'dev', 'lan0', 'src', '198.18.90.5');
    const fix =
      /give 198\.18\.90\.5 an interface of its own \(ip link add nccl0 type dummy; .*\) and name it with --iface nccl0/;
    const { code, json } = await explain('bgp', '198.19.90.1');
    expect(code).toBe(69);
    const route = json.trace.find((step) => step.strategy === 'route');
    expect(route?.outcome).toBe('fatal');
    expect(route?.reason).toMatch(/an address only lo holds/);
    expect(route?.reason).toMatch(/lo's first address, 127\.0\.0\.1/);
    expect(route?.reason).toMatch(fix);
    const iface = await cli('bgp', [
      'check',
      '--iface',
      'lo',
      '--verify',
      'none',
      ...job('198.19.90.1'),
    ]);
    expect(iface.code).toBe(69);
    expect(iface.stderr).toMatch(/--iface lo is not usable \(lo: lo is this host's loopback/);
    expect(iface.stderr).toMatch(fix);
  });

  it('two NICs in one subnet, the kernel sending from the other: explain, check and run each say it once (NVIDIA/nccl#1581)', async () => {
    await lab.host('two');
    await lab.host('twom');
    await wire('two', 'eth0', 'twom', 'm0');
    await wire('two', 'eth1', 'twom', 'm1');
    // The kernel prefers the lower metric: eth1's route, while eth0 is first by name and speed.
    await lab.ip('two', 'addr', 'add', '198.18.10.2/24', 'dev', 'eth0', 'metric', '101');
    await lab.ip('two', 'addr', 'add', '198.18.10.3/24', 'dev', 'eth1', 'metric', '100');
    const route =
      'the route to the master 198.18.10.1 leaves through eth1, not the chosen eth0; routes covering it: 198.18.10.0/24 dev eth1 metric 100; 198.18.10.0/24 dev eth0 metric 101';
    const explained = await explain('two', '198.18.10.1');
    expect(explained.json.decision).toMatchObject({ interface: 'eth0' });
    expect(explained.json.warnings).toEqual([route]);
    const checked = await cli('two', [
      'check',
      '--json',
      '--verify',
      'local',
      ...job('198.18.10.1'),
    ]);
    expect(checked.code).toBe(0);
    expect((JSON.parse(checked.stdout) as Explained).warnings).toEqual([route]);
    // run: the same warning logged once, then torchrun (here /bin/true: the launch is not the point).
    const ran = await cli('two', [
      ...['--verify', 'local', '--log-format', 'json', '--torchrun', '/bin/true'],
      ...job('198.18.10.1'),
      'train.py',
    ]);
    expect(ran.code).toBe(0);
    const logged = ran.stderr
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level === 40 && line.msg.includes(route));
    expect(logged).toHaveLength(1);
  });
});
