/**
 * Issue 13, a master with several addresses: its name resolves to
 * [management, data] and the master filters by strict reverse path
 * (rp_filter=1). Dialling the first address from the chosen data address is
 * dropped there, though torch's TCPStore, which imposes no source, connects.
 * So the store is checked as TCPStore reaches it, and the data path apart.
 *
 * Issue 19 item 3, a name whose first address is dead: torch's TCPStore
 * client (c10d/socket.cpp SocketConnectOp, 1.13 and 2.6) tries each address
 * in turn, moving on after a refusal or an unreachable address and staying
 * on one that is silent. The host's real torch client is the oracle: where
 * it connects, the check passes; where it times out, the check fails (75).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN } from '../fixtures/nccl-run-process.js';
import { torch26Env } from '../lab/debian-root.js';
import { HOST_TORCHRUN, torchrunInterpreter, torchrunVersion } from '../lab/host-torchrun.js';
import { Lab, netnsUnavailable } from '../lab/netns.js';
import { tier, tierTest } from '../lab/tier.js';
import { iptables, listenInside } from './verify-lab.js';

const HOSTS = [
  '203.0.113.1 master',
  '198.18.10.1 master',
  // No route from the worker to 198.18.40.0/24: unreachable at once.
  '198.18.40.1 unreachablefirst',
  '198.18.10.1 unreachablefirst',
  // The master rejects port 29600 on its management address (a reset).
  '203.0.113.1 refusedfirst',
  '198.18.10.1 refusedfirst',
  // The master drops port 29600 on its management address: silence.
  '203.0.113.1 silentfirst',
  '198.18.10.1 silentfirst',
  '',
].join('\n');
const STORE_PORT = 29600;
const TORCH_PYTHON = torchrunInterpreter();
const torchUnavailable =
  !existsSync(HOST_TORCHRUN) || TORCH_PYTHON === null || !existsSync(TORCH_PYTHON)
    ? `Debian's torch (${HOST_TORCHRUN}) and the Python on its #! line are needed`
    : null;
/** LAB WORKAROUND (debian-root.ts torch26Env): Debian's torch 2.6 TCPStore needs use_libuv=False. */
const TORCH_ENV = torchrunVersion()?.startsWith('1.') ? {} : torch26Env;

tier('verify master: a master name with a management and a data address', netnsUnavailable, () => {
  const lab = new Lab('vma');
  let listener: { stop(): void } | undefined;

  beforeAll(async () => {
    await lab.host('m');
    await lab.host('w', `127.0.0.1 localhost\n${HOSTS}`);
    await lab.link('m', 'eth0', 'w', 'eth0');
    await lab.link('m', 'ens3f0', 'w', 'ens3f0');
    await lab.addr('m', 'eth0', '203.0.113.1/24');
    await lab.addr('w', 'eth0', '203.0.113.2/24');
    await lab.addr('m', 'ens3f0', '198.18.10.1/24');
    await lab.addr('w', 'ens3f0', '198.18.10.2/24');
    for (const knob of ['all', 'eth0']) {
      await lab.exec('m', 'sysctl', ['-qw', `net.ipv4.conf.${knob}.rp_filter=1`]);
    }
    listener = await listenInside(lab, 'm', '0.0.0.0', 29500);
    const rule = ['-d', '203.0.113.1', '-p', 'tcp', '--dport', String(STORE_PORT)];
    await iptables(lab, 'm', '-A', 'INPUT', ...rule, '-j', 'REJECT', '--reject-with', 'tcp-reset');
  });
  afterAll(async () => {
    listener?.stop();
    await lab.cleanup();
  });

  it('passes: the store as TCPStore reaches it, and the data address from the data address', async () => {
    const result = await lab.exec(
      'w',
      BIN,
      [
        ...['check', '--json', '--iface', 'ens3f0', '--verify', 'master', '--verify-timeout', '8s'],
        ...['--nnodes=2', '--node_rank=1', '--master_addr=master'],
      ],
      { reject: false, timeout: 20_000 },
    );
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const report = JSON.parse(String(result.stdout));
    expect(report.results).toEqual([
      expect.objectContaining({ check: 'connect', address: '203.0.113.1', ok: true }),
      expect.objectContaining({ check: 'data path', address: '198.18.10.1', ok: true }),
    ]);
  });

  /** check --json against the name's store at STORE_PORT. */
  const check = (name: string, timeout: string) =>
    lab.exec(
      'w',
      BIN,
      [
        ...[
          'check',
          '--json',
          '--iface',
          'ens3f0',
          '--verify',
          'master',
          '--verify-timeout',
          timeout,
        ],
        ...['--nnodes=2', '--node_rank=1', `--master_addr=${name}`, `--master_port=${STORE_PORT}`],
      ],
      { reject: false, timeout: 30_000 },
    );

  /** torch's own TCPStore client on the worker, one Python for all names: 'joined' or the error's class, each. */
  const torchClient = async (names: string[], seconds: number) => {
    const run = await lab.exec(
      'w',
      TORCH_PYTHON as string,
      [
        '-c',
        [
          'import datetime, sys, torch.distributed as d',
          'for name in sys.argv[1:]:',
          '    try:',
          `        d.TCPStore(name, ${STORE_PORT}, 2, False, timeout=datetime.timedelta(seconds=${seconds}))`,
          '        print("joined", flush=True)',
          '    except Exception as e:',
          '        print(type(e).__name__, flush=True)',
        ].join('\n'),
        ...names,
      ],
      { reject: false, timeout: 60_000, env: TORCH_ENV },
    );
    return String(run.stdout).trim().split('\n');
  };

  tierTest(
    'a first address that refuses or is unreachable: torch joins its store, and the check passes',
    torchUnavailable,
    async () => {
      const store = lab.exec(
        'm',
        TORCH_PYTHON as string,
        [
          '-c',
          [
            'import datetime, time, torch.distributed as d',
            `s = d.TCPStore("0.0.0.0", ${STORE_PORT}, 2, True, timeout=datetime.timedelta(seconds=60), wait_for_workers=False)`,
            'print("up", flush=True)',
            'time.sleep(60)',
          ].join('\n'),
        ],
        { reject: false, timeout: 90_000, env: TORCH_ENV },
      );
      try {
        await new Promise<void>((resolve) =>
          store.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('up') && resolve()),
        );
        const names = ['refusedfirst', 'unreachablefirst'];
        expect(await torchClient(names, 10)).toEqual(['joined', 'joined']);
        for (const name of names) {
          const result = await check(name, '10s');
          expect(result.exitCode, String(result.stderr)).toBe(0);
          expect(JSON.parse(String(result.stdout)).results[0]).toMatchObject({
            check: 'connect',
            address: '198.18.10.1',
            ok: true,
          });
        }
      } finally {
        store.kill('SIGKILL');
      }
    },
  );

  tierTest(
    'a first address that is silent: torch waits there until its timeout, and the check fails (75)',
    torchUnavailable,
    async () => {
      const rule = ['-d', '203.0.113.1', '-p', 'tcp', '--dport', String(STORE_PORT)];
      await iptables(lab, 'm', '-I', 'INPUT', ...rule, '-j', 'DROP');
      const second = await listenInside(lab, 'm', '198.18.10.1', STORE_PORT);
      try {
        const [torch] = await torchClient(['silentfirst'], 3);
        expect(torch).toMatch(/Timeout|Error/);
        const result = await check('silentfirst', '3s');
        expect(result.exitCode, String(result.stderr)).toBe(75);
        expect(String(result.stderr)).toMatch(/203\.0\.113\.1:29600: timed out/);
      } finally {
        second.stop();
        await iptables(lab, 'm', '-D', 'INPUT', ...rule, '-j', 'DROP');
      }
    },
  );
});
