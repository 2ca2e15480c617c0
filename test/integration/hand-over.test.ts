/**
 * The hand-over words (src/launch/hand-over.ts) as bin/nccl-run uses them:
 * evaluated by real POSIX shells, they set exactly the variables given,
 * whatever their values hold, and leave argv as the launcher words followed
 * by the shell's own arguments past nccl-run's.
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { handoverScript } from '../../src/launch/hand-over.js';

const VALUES = {
  NCCL_SOCKET_IFNAME: '=ens3f0',
  TRICKY: `it's "$HOME" \`id\` ; * \\ \n end`,
  EMPTY: '',
};

describe.each(['dash', 'bash'])('the hand-over under %s', (shell) => {
  it('exports the values as given and puts the launcher before the shifted argv', async () => {
    const script = handoverScript({
      file: '/usr/bin/torchrun',
      launcher: ['python3', '-m', 'torch.distributed.run', 'a b'],
      ownTokens: 3,
      torchrunArgv: [],
      exports: VALUES,
      env: {},
    });
    const { stdout } = await execa(
      shell,
      [
        '-c',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
        'handover=$1; shift; eval "$handover"; printf "%s\\0" "$@" "$NCCL_SOCKET_IFNAME" "$TRICKY" "${EMPTY-unset}"',
        'sh',
        script,
        '--iface',
        'eth0',
        '--dry',
        'train.py',
        '--iface',
        '',
      ],
      { extendEnv: false, env: { PATH: process.env.PATH } },
    );
    expect(stdout.split('\0').slice(0, -1)).toEqual([
      ...['python3', '-m', 'torch.distributed.run', 'a b', 'train.py', '--iface', ''],
      VALUES.NCCL_SOCKET_IFNAME,
      VALUES.TRICKY,
      '',
    ]);
  });
});
