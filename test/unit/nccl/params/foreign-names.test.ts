/** Names that are not NCCL's to read (src/nccl/params/foreign-names.ts). */
import { describe, expect, it } from 'vitest';
import { foreignOwner } from '../../../../src/nccl/params/foreign-names.js';

describe('foreignOwner', () => {
  it.each([
    ['NCCL_OFI_NIC_DUP_CONNS', 'the aws-ofi-nccl net plugin'],
    ['NCCL_GPUDIRECTTCPX_CTRL_DEV', 'the GPUDirect-TCPX net plugin'],
    ['NCCL_FASTRAK_IFNAME', 'the GPUDirect-TCPXO (FasTrak) net plugin'],
    ['NCCL_RUN_IFACE', 'nccl-run'],
    ['NCCL_VERSION', "the image (NVIDIA's images name their NCCL with it)"],
    ['NCCL_LIB_DIR', 'builds that look for NCCL'],
    ['NCCL_BLOCKING_WAIT', 'torch'],
  ])('%s belongs to %s', (name, owner) => {
    expect(foreignOwner(name)).toBe(owner);
  });

  it.each(['NCCL_VERSIONS', 'NCCL_OF', 'NCCL_SOCKET_IFNAME', 'NCCL_PORT_RANGE'])(
    '%s is for NCCL to judge: a whole name matches only itself, a prefix only its own names',
    (name) => {
      expect(foreignOwner(name)).toBeNull();
    },
  );
});
