import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitArgv } from '../../../src/cli/split-argv.js';
import { ConfigError, UsageError } from '../../../src/errors.js';
import { OPTIONS, type Options, oneOf, option } from '../../../src/options/option-table.js';
import { settleOptions } from '../../../src/options/settle-options.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';

const emptyDir = tempDirs('nccl-run-config-');

function settle(own: string[], env: Record<string, string> = {}, cwd = emptyDir()) {
  return settleOptions(splitArgv(own).flags, env, cwd);
}

describe('settleOptions: precedence flag > environment > env file > default', () => {
  it('uses the defaults of SPEC "Options"', () => {
    const { options } = settle([]);
    expect(options).toMatchObject({
      iface: [],
      strategy: ['explicit', 'local', 'multus', 'subnet', 'route', 'speed'],
      family: 'auto',
      verify: 'master',
      verifyTimeout: 60_000,
      cluster: 'auto',
      torchrun: ['torchrun'],
      format: 'shell',
      logLevel: 'info',
      logFormat: 'text',
      envFile: null,
      force: false,
      dryRun: false,
    });
  });

  it('a flag beats the environment, which beats the env file', () => {
    const dir = emptyDir();
    writeFileSync(
      join(dir, 'nccl-run.env'),
      'NCCL_RUN_IFACE=from-file\nNCCL_RUN_VERIFY=none\nNCCL_RUN_FAMILY=ipv6\n',
    );
    const env = { NCCL_RUN_IFACE: 'from-env', NCCL_RUN_VERIFY: 'local' };
    const { options, sources } = settle(['--iface', 'from-flag'], env, dir);
    expect(options.iface).toEqual(['from-flag']);
    expect(options.verify).toBe('local');
    expect(options.family).toBe('ipv6');
    expect(sources.iface).toEqual({ name: '--iface', from: 'flag' });
    expect(sources.verify).toEqual({ name: 'NCCL_RUN_VERIFY', from: 'env' });
    expect(sources.family).toMatchObject({
      name: expect.stringMatching(/^NCCL_RUN_FAMILY in .*nccl-run\.env$/),
      from: 'env-file',
    });
  });

  it('passes env-file keys that are not NCCL_RUN_* to torchrun', () => {
    const dir = emptyDir();
    writeFileSync(join(dir, 'nccl-run.env'), 'NCCL_IB_HCA=mlx5_0\nNCCL_RUN_VERIFY=none\n');
    expect(settle([], {}, dir).envFileExtras).toEqual({ NCCL_IB_HCA: 'mlx5_0' });
  });

  it('reads --env-file and NCCL_RUN_ENV_FILE', () => {
    const dir = emptyDir();
    writeFileSync(join(dir, 'a.env'), 'NCCL_RUN_VERIFY=none\n');
    expect(settle(['--env-file', join(dir, 'a.env')]).options.verify).toBe('none');
    expect(settle([], { NCCL_RUN_ENV_FILE: join(dir, 'a.env') }).options.verify).toBe('none');
  });

  it('parses lists, durations, ports, booleans and the launcher words', () => {
    const { options } = settle([
      '--iface',
      'ens3f0, ens3f1',
      '--strategy',
      'explicit,route,speed',
      '--verify-timeout',
      '1.5s',
      '--probe-port',
      '29501',
      '--torchrun',
      'python3 -m torch.distributed.run',
      '--nccl-debug',
      'info',
    ]);
    expect(options.iface).toEqual(['ens3f0', 'ens3f1']);
    expect(options.strategy).toEqual(['explicit', 'route', 'speed']);
    expect(options.verifyTimeout).toBe(1500);
    expect(options.probePort).toBe(29501);
    expect(options.torchrun).toEqual(['python3', '-m', 'torch.distributed.run']);
    expect(options.ncclDebug).toBe('INFO');
    expect(settle([], { NCCL_RUN_FORCE: '1', NCCL_RUN_DRY_RUN: 'false' }).options).toMatchObject({
      force: true,
      dryRun: false,
    });
  });
});

// Every bad value: one line naming where it came from, the value and what is valid.
const badFlags: [string[], RegExp][] = [
  [
    ['--strategy', 'explicit,fastest'],
    /^--strategy: bad value 'explicit,fastest': unknown strategy 'fastest'; valid: explicit, local, multus, subnet, route, speed, agree$/,
  ],
  [['--strategy', 'route,route'], /strategy 'route' is listed twice/],
  [
    ['--verify', 'all'],
    /^--verify: bad value 'all': expected one of none, local, master, peers, collective$/,
  ],
  [
    ['--verify-timeout', '5x'],
    /^--verify-timeout: bad value '5x': expected a duration such as 500ms, 30s, 2m$/,
  ],
  [['--probe-port', '70000'], /^--probe-port: bad value '70000': expected a port number 1-65535$/],
  [['--probe-port', '0'], /expected a port number 1-65535/],
  // SPEC "Options": a rate without a unit is a bad value (bits or bytes?).
  [
    ['--verify', 'peers', '--min-bandwidth', '500'],
    /^--min-bandwidth: bad value '500': expected a rate with its unit, such as 500mbit, 10gbit, 2GB\/s$/,
  ],
  [['--verify', 'peers', '--min-bandwidth', '10 furlongs'], /^--min-bandwidth: bad value/],
  [['--family', 'inet'], /^--family: bad value 'inet': expected one of auto, ipv4, ipv6$/],
  [['--cluster', 'pbs'], /^--cluster: bad value 'pbs': expected one of auto, slurm, k8s, none$/],
  [['--log-level', 'loud'], /^--log-level: bad value 'loud'/],
  [
    ['--env-file', '/nonexistent/x.env'],
    /^--env-file: cannot read '\/nonexistent\/x.env' \(ENOENT\)/,
  ],
  [['--iface'], /^--iface: missing value$/],
  [
    ['--skip-check', 'shm,ulimit'],
    /^--skip-check: bad value 'shm,ulimit': unknown check 'ulimit'; valid: shm, memlock, nofile, mtu, rp-filter, gpus$/,
  ],
];

describe('settleOptions: bad flags are usage errors (64)', () => {
  it.each(badFlags)('%j', (own, message) => {
    const attempt = () => settle(own);
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(message);
  });
});

describe('settleOptions: bad variables and env files are configuration errors (78)', () => {
  it('names the variable', () => {
    const attempt = () => settle([], { NCCL_RUN_VERIFY_TIMEOUT: 'soon' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^NCCL_RUN_VERIFY_TIMEOUT: bad value 'soon': expected a duration/);
  });

  it('rejects an unknown NCCL_RUN_ variable, a typo that would do nothing', () => {
    expect(() => settle([], { NCCL_RUN_IFAEC: 'eth0' })).toThrow(
      /^NCCL_RUN_IFAEC in the environment is not a nccl-run setting; valid: NCCL_RUN_IFACE/,
    );
  });

  it('names the env file for a bad entry in it', () => {
    const dir = emptyDir();
    writeFileSync(join(dir, 'nccl-run.env'), 'NCCL_RUN_PROBE_PORT=http\n');
    expect(() => settle([], {}, dir)).toThrow(
      /^NCCL_RUN_PROBE_PORT in .*nccl-run\.env: bad value 'http': expected a port number/,
    );
  });

  it('reads --min-bandwidth into Mbit/s, and refuses it below --verify peers, where nothing measures', () => {
    expect(settle(['--verify', 'peers', '--min-bandwidth', '2GB/s']).options.minBandwidth).toBe(
      16_000,
    );
    expect(
      settle([], { NCCL_RUN_VERIFY: 'peers', NCCL_RUN_MIN_BANDWIDTH: '500mbit' }).options,
    ).toMatchObject({
      minBandwidth: 500,
    });
    const attempt = () => settle(['--min-bandwidth', '1gbit']);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      '--min-bandwidth: --min-bandwidth needs --verify peers (the level is master, from the default)',
    );
  });

  it('reads --min-bus-bandwidth into Mbit/s, and refuses it below --verify collective, where no collective runs', () => {
    expect(
      settle(['--verify', 'collective', '--min-bus-bandwidth', '1GB/s']).options.minBusBandwidth,
    ).toBe(8_000);
    const attempt = () => settle(['--verify', 'peers', '--min-bus-bandwidth', '1gbit']);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      '--min-bus-bandwidth: --min-bus-bandwidth needs --verify collective (the level is peers, from --verify)',
    );
  });

  it('reads --skip-check from the flag, NCCL_RUN_SKIP_CHECK and the env file, and refuses an unknown check in one line', () => {
    expect(settle(['--skip-check', 'shm, rp-filter']).options.skipCheck).toEqual([
      'shm',
      'rp-filter',
    ]);
    expect(settle([]).options.skipCheck).toEqual([]);
    const dir = emptyDir();
    writeFileSync(join(dir, 'nccl-run.env'), 'NCCL_RUN_SKIP_CHECK=gpus\n');
    expect(settle([], {}, dir).options.skipCheck).toEqual(['gpus']);
    expect(settle([], { NCCL_RUN_SKIP_CHECK: 'memlock' }, dir).options.skipCheck).toEqual([
      'memlock',
    ]);
    const attempt = () => settle([], { NCCL_RUN_SKIP_CHECK: 'mtu,dev-shm' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      /^NCCL_RUN_SKIP_CHECK: bad value 'mtu,dev-shm': unknown check 'dev-shm'; valid: shm, memlock, nofile, mtu, rp-filter, gpus$/,
    );
  });

  it('refuses --iface with a chain that cannot use it', () => {
    expect(() => settle([], { NCCL_RUN_IFACE: 'eth0', NCCL_RUN_STRATEGY: 'route' })).toThrow(
      ConfigError,
    );
  });
});

describe('the option table', () => {
  it('gives every option its value type from its schema and default', () => {
    // Compile-time checks (npm run lint runs tsc over the tests): a default
    // outside the schema's values and a misspelt option are type errors.
    option({
      ...oneOf(['auto', 'ipv4']),
      group: 'Interface',
      describe: 'test',
      // @ts-expect-error 'ipv5' is none of the schema's values
      default: 'ipv5',
    });
    // @ts-expect-error the options are camelCase: verifyTimeout, not verifyTimeoutMs
    const misspelt: Options['verifyTimeoutMs'] = 1;
    const timeout: Options['verifyTimeout'] = 1;
    // An option without a default is null when not given.
    const facts: Options['facts'] = null;
    expect([misspelt, timeout, facts]).toEqual([1, 1, null]);
  });

  it('has a variable for every option, which settles as the flag does', () => {
    for (const [name, spec] of Object.entries(OPTIONS)) {
      const raw = spec.type === 'boolean' ? 'yes' : sample[name as keyof typeof OPTIONS];
      // collective: the level every option is valid at (--min-bus-bandwidth needs it).
      const fromFlag = settle([`--${name}=${raw}`, '--verify=collective']).options;
      const fromEnv = settle(['--verify=collective'], {
        [`NCCL_RUN_${name.toUpperCase().replaceAll('-', '_')}`]: String(raw),
      }).options;
      expect(fromEnv, name).toEqual(fromFlag);
    }
  });
});

/** A valid value for every option that takes one. */
const sample: Record<keyof typeof OPTIONS, string> = {
  iface: 'eth0',
  strategy: 'explicit,route',
  exclude: '=eth1',
  'no-default-excludes': 'yes',
  family: 'ipv6',
  'network-status': '/etc/podinfo/annotations',
  facts: 'facts.json',
  verify: 'peers',
  'verify-timeout': '2m',
  'require-transport': 'ib',
  peers: 'n[1-2]',
  'probe-port': '29501',
  'probe-secret-file': '/run/secrets/probe',
  'min-bandwidth': '1gbit',
  'min-bus-bandwidth': '2GB/s',
  'skip-check': 'shm,rp-filter',
  cluster: 'none',
  'nccl-debug': 'info',
  'nccl-debug-subsys': 'INIT',
  // A folder that is there and writable (the option makes a missing one).
  'nccl-log': tmpdir(),
  force: 'yes',
  torchrun: 'python3 -m torch.distributed.run',
  'torch-version': '2.6',
  'env-file': '/dev/null',
  'dry-run': 'yes',
  json: 'yes',
  format: 'json',
  'log-level': 'warn',
  'log-format': 'json',
};
