import { describe, expect, it } from 'vitest';
import type { ClusterInfo } from '../../../src/cluster/scheduler.js';
import { ConfigError, UsageError } from '../../../src/errors.js';
import type { JobShape } from '../../../src/job/job-shape.js';
import { readJobShape } from '../../../src/job/read-job-shape.js';
import { torchrunTable } from '../../../src/torch/torchrun-table.js';
import { elasticC10dArgv as c10d, endpointOrigins, originNamed } from '../../fixtures/job-shape.js';

const SLURM: ClusterInfo = {
  kind: 'slurm',
  controller: 'Slurm',
  variables: ['SLURM_JOB_ID', 'SLURM_JOB_NODELIST', 'SLURM_NNODES', 'SLURM_NODEID'],
  masterHost: 'node01',
  masterPort: 21_345,
  nnodes: 4,
  nodeRank: 2,
  peers: ['node01', 'node02', 'node03', 'node04'],
  jobId: '4242',
  nodeName: 'node03',
  munge: { conf: '/etc/slurm/slurm.conf' },
  namesComeLate: false,
};

/** What the Kubeflow operator sets for a PyTorchJob worker, as detectCluster reads it. */
const K8S_ENV = {
  MASTER_ADDR: 'job-master-0',
  MASTER_PORT: '23456',
  PET_NNODES: '3',
  PET_NODE_RANK: '1',
};
const K8S: ClusterInfo = {
  kind: 'k8s',
  controller: 'Kubeflow PyTorchJob (training-operator v1)',
  variables: ['MASTER_ADDR', 'MASTER_PORT', 'PET_NNODES', 'PET_NODE_RANK'],
  masterHost: 'job-master-0',
  masterPort: 23_456,
  nnodes: 3,
  nodeRank: 1,
  peers: ['job-master-0', 'job-worker-0', 'job-worker-1'],
  jobId: null,
  nodeName: null,
  munge: null,
  namesComeLate: false,
};

const NO_CLUSTER_VALUES: ClusterInfo = {
  kind: 'slurm',
  controller: 'Slurm',
  variables: [],
  masterHost: null,
  masterPort: null,
  nnodes: null,
  nodeRank: null,
  peers: [],
  jobId: null,
  nodeName: null,
  munge: null,
  namesComeLate: false,
};

interface Row {
  why: string;
  argv: string[];
  env?: Record<string, string>;
  cluster?: ClusterInfo;
  /** Each field given is compared whole (toEqual). */
  expect?: Partial<JobShape>;
  error?: { type: typeof UsageError | typeof ConfigError; message: RegExp };
}

const DEFAULT_MASTER = { host: '127.0.0.1', port: 29_500, ...endpointOrigins('default') };

const PRECEDENCE: Row[] = [
  {
    why: "nothing given: torchrun's defaults",
    argv: ['train.py'],
    expect: {
      rdzvBackend: 'static',
      master: DEFAULT_MASTER,
      masterAddr: '127.0.0.1',
      nnodes: { min: 1, max: 1, origin: originNamed('default') },
      nodeRank: { value: 0, origin: originNamed('default') },
      standalone: false,
      localAddr: null,
      fill: {},
      clusterPeers: [],
      cluster: null,
      isHost: null,
    },
  },
  {
    why: 'argv beats PET_*, MASTER_* and the cluster',
    argv: [
      '--master-addr',
      '198.18.0.1',
      '--master_port=1234',
      '--nnodes=2',
      '--node-rank=1',
      't.py',
    ],
    env: {
      PET_MASTER_ADDR: 'pet',
      PET_MASTER_PORT: '2222',
      PET_NNODES: '3',
      PET_NODE_RANK: '2',
      MASTER_ADDR: 'env',
      MASTER_PORT: '3333',
    },
    cluster: SLURM,
    expect: {
      master: {
        host: '198.18.0.1',
        port: 1234,
        ...endpointOrigins('--master-addr, port --master_port'),
      },
      nnodes: { min: 2, max: 2, origin: originNamed('--nnodes') },
      nodeRank: { value: 1, origin: originNamed('--node-rank') },
      fill: {},
      cluster: 'slurm',
      clusterPeers: SLURM.peers,
    },
  },
  {
    why: 'PET_* beats MASTER_* and the cluster, and is not exported again',
    argv: ['t.py'],
    env: {
      PET_MASTER_ADDR: 'pet-host',
      PET_MASTER_PORT: '2222',
      PET_NNODES: '1:3',
      PET_NODE_RANK: '0',
      MASTER_ADDR: 'env-host',
      MASTER_PORT: '3333',
    },
    cluster: SLURM,
    expect: {
      master: {
        host: 'pet-host',
        port: 2222,
        ...endpointOrigins('PET_MASTER_ADDR, port PET_MASTER_PORT'),
      },
      nnodes: { min: 1, max: 3, origin: originNamed('PET_NNODES') },
      nodeRank: { value: 0, origin: originNamed('PET_NODE_RANK') },
      fill: {},
    },
  },
  {
    why: 'MASTER_* beats the cluster; what the cluster supplied is exported with the value read',
    argv: ['t.py'],
    env: { MASTER_ADDR: '198.18.0.9', MASTER_PORT: '3333' },
    cluster: SLURM,
    expect: {
      master: {
        host: '198.18.0.9',
        port: 3333,
        ...endpointOrigins('MASTER_ADDR, port MASTER_PORT'),
      },
      fill: {
        PET_MASTER_ADDR: '198.18.0.9',
        PET_MASTER_PORT: '3333',
        PET_NNODES: '4',
        PET_NODE_RANK: '2',
      },
      cluster: 'slurm',
    },
  },
  {
    why: 'MASTER_* without a cluster: read, and exported so torchrun agrees',
    argv: ['t.py'],
    env: { MASTER_ADDR: ' 198.18.0.9 ', MASTER_PORT: '3333' },
    expect: {
      master: {
        host: '198.18.0.9',
        port: 3333,
        ...endpointOrigins('MASTER_ADDR, port MASTER_PORT'),
      },
      fill: { PET_MASTER_ADDR: '198.18.0.9', PET_MASTER_PORT: '3333' },
      cluster: null,
    },
  },
  {
    why: 'blank MASTER_* count as unset',
    argv: ['t.py'],
    env: { MASTER_ADDR: ' ', MASTER_PORT: '' },
    expect: { master: DEFAULT_MASTER },
  },
  {
    why: 'the cluster fills what nothing else gives',
    argv: ['--nproc-per-node=8', 't.py'],
    cluster: SLURM,
    expect: {
      master: { host: 'node01', port: 21_345, ...endpointOrigins('slurm') },
      nnodes: { min: 4, max: 4, origin: originNamed('slurm') },
      nodeRank: { value: 2, origin: originNamed('slurm') },
      fill: {
        PET_MASTER_ADDR: 'node01',
        PET_MASTER_PORT: '21345',
        PET_NNODES: '4',
        PET_NODE_RANK: '2',
      },
      clusterPeers: SLURM.peers,
      cluster: 'slurm',
    },
  },
  {
    why: 'the cluster fills only the gaps',
    argv: ['--master_addr', 'node03', '--nnodes', '2', 't.py'],
    env: { PET_NODE_RANK: '1' },
    cluster: SLURM,
    expect: {
      master: { host: 'node03', port: 21_345, ...endpointOrigins('--master_addr, port slurm') },
      nnodes: { min: 2, max: 2, origin: originNamed('--nnodes') },
      nodeRank: { value: 1, origin: originNamed('PET_NODE_RANK') },
      fill: { PET_MASTER_PORT: '21345' },
    },
  },
  {
    why: 'Kubeflow: PET_NNODES/PET_NODE_RANK are read by torchrun; MASTER_* are exported for it',
    argv: ['--nproc_per_node=8', 't.py'],
    env: K8S_ENV,
    cluster: K8S,
    expect: {
      master: {
        host: 'job-master-0',
        port: 23_456,
        ...endpointOrigins('MASTER_ADDR, port MASTER_PORT'),
      },
      nnodes: { min: 3, max: 3, origin: originNamed('PET_NNODES') },
      nodeRank: { value: 1, origin: originNamed('PET_NODE_RANK') },
      fill: { PET_MASTER_ADDR: 'job-master-0', PET_MASTER_PORT: '23456' },
      cluster: 'k8s',
    },
  },
  {
    why: 'a cluster that knows nothing fills nothing and is not named',
    argv: ['t.py'],
    cluster: NO_CLUSTER_VALUES,
    expect: { master: DEFAULT_MASTER, fill: {}, cluster: null, clusterPeers: [] },
  },
  {
    why: "the training script's arguments are not read",
    argv: ['t.py', '--master-addr', 'x', '--nnodes', '9', '--standalone'],
    expect: {
      master: DEFAULT_MASTER,
      nnodes: { min: 1, max: 1, origin: originNamed('default') },
      standalone: false,
    },
  },
];

const RENDEZVOUS: Row[] = [
  {
    why: "a c10d endpoint at port 0 on one node: a port torch picks (torch's docs, torchtitan)",
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint=localhost:0', '--nnodes=1', 't.py'],
    expect: {
      rdzvBackend: 'c10d',
      master: { host: 'localhost', port: 0, ...endpointOrigins('--rdzv-endpoint') },
    },
  },
  {
    why: 'the same with --nnodes left out (torchrun takes 1:1)',
    argv: ['--rdzv_backend', 'c10d', '--rdzv_endpoint', '127.0.0.1:0', 't.py'],
    expect: { master: { host: '127.0.0.1', port: 0, ...endpointOrigins('--rdzv_endpoint') } },
  },
  {
    why: '--standalone: c10d on localhost, no master, the cluster fills nothing',
    argv: ['--standalone', '--nproc-per-node=8', 't.py'],
    cluster: SLURM,
    expect: {
      rdzvBackend: 'c10d',
      standalone: true,
      master: null,
      masterAddr: null,
      nnodes: { min: 1, max: 1, origin: originNamed('default') },
      nodeRank: null,
      fill: {},
      cluster: 'slurm',
    },
  },
  {
    why: '--standalone overrides --rdzv-backend and --rdzv-endpoint',
    argv: ['--standalone', '--rdzv-backend=etcd', '--rdzv-endpoint=h:1', 't.py'],
    expect: { rdzvBackend: 'c10d', master: null },
  },
  {
    why: 'PET_STANDALONE=1 (check_env)',
    argv: ['t.py'],
    env: { PET_STANDALONE: '1' },
    expect: { standalone: true, master: null },
  },
  {
    why: 'PET_STANDALONE=0',
    argv: ['t.py'],
    env: { PET_STANDALONE: '0' },
    expect: { standalone: false, master: DEFAULT_MASTER },
  },
  {
    why: 'c10d endpoint without a port: 29400',
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint=198.18.0.1', '--nnodes=2:4', 't.py'],
    cluster: SLURM,
    expect: {
      rdzvBackend: 'c10d',
      master: {
        host: '198.18.0.1',
        port: 29_400,
        ...endpointOrigins('--rdzv-endpoint, port default'),
      },
      masterAddr: null,
      nnodes: { min: 2, max: 4, origin: originNamed('--nnodes') },
      nodeRank: { value: 2, origin: originNamed('slurm') },
      fill: { PET_NODE_RANK: '2' },
    },
  },
  {
    why: 'c10d without an endpoint: localhost:29400, as torch reads an empty one',
    argv: ['--rdzv_backend', 'c10d', 't.py'],
    expect: {
      master: { host: 'localhost', port: 29_400, ...endpointOrigins('default') },
      nodeRank: null,
    },
  },
  {
    why: 'c10d IPv6 endpoint with a port',
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint', '[2001:db8::1]:29401', 't.py'],
    expect: {
      master: { host: '2001:db8::1', port: 29_401, ...endpointOrigins('--rdzv-endpoint') },
    },
  },
  {
    why: 'c10d IPv6 endpoint in brackets without a port',
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint=[2001:db8::1]', 't.py'],
    expect: {
      master: {
        host: '2001:db8::1',
        port: 29_400,
        ...endpointOrigins('--rdzv-endpoint, port default'),
      },
    },
  },
  {
    why: 'c10d with --master-addr: kept for the two-networks warning',
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint=node1:29400', '--master-addr=mgmt1', 't.py'],
    expect: {
      master: { host: 'node1', port: 29_400, ...endpointOrigins('--rdzv-endpoint') },
      masterAddr: 'mgmt1',
    },
  },
  {
    why: 'backend and endpoint from PET_*',
    argv: ['t.py'],
    env: { PET_RDZV_BACKEND: 'c10d', PET_RDZV_ENDPOINT: 'job-worker-0:23456', PET_NNODES: '2:3' },
    expect: {
      rdzvBackend: 'c10d',
      master: { host: 'job-worker-0', port: 23_456, ...endpointOrigins('PET_RDZV_ENDPOINT') },
      nnodes: { min: 2, max: 3, origin: originNamed('PET_NNODES') },
    },
  },
  {
    why: 'static with --rdzv-endpoint: the endpoint, not --master-addr',
    argv: ['--rdzv-endpoint=node2:1234', '--master-addr=node9', 't.py'],
    expect: {
      master: { host: 'node2', port: 1234, ...endpointOrigins('--rdzv-endpoint') },
      masterAddr: 'node2',
    },
  },
  {
    why: 'static with an empty --rdzv-endpoint: master_addr:master_port',
    argv: ['--rdzv-endpoint=', '--master-addr=node9', 't.py'],
    expect: {
      master: { host: 'node9', port: 29_500, ...endpointOrigins('--master-addr, port default') },
    },
  },
  {
    why: 'etcd: port 2379',
    argv: ['--rdzv-backend=etcd', '--rdzv-endpoint=etcd1', 't.py'],
    expect: {
      master: { host: 'etcd1', port: 2379, ...endpointOrigins('--rdzv-endpoint, port default') },
    },
  },
  {
    why: "a plugin backend's endpoint nccl-run cannot read: no master, no error",
    argv: ['--rdzv-backend=mine', '--rdzv-endpoint=zk://a,b/x', 't.py'],
    expect: { rdzvBackend: 'mine', master: null },
  },
  {
    why: 'a backend named like an Object property is just an unknown backend',
    argv: ['--rdzv-backend=constructor', '--rdzv-endpoint=h', 't.py'],
    expect: { rdzvBackend: 'constructor', master: null },
  },
  {
    why: "a plugin backend's host:port endpoint",
    argv: ['--rdzv-backend=mine', '--rdzv-endpoint=h:7', 't.py'],
    expect: { master: { host: 'h', port: 7, ...endpointOrigins('--rdzv-endpoint') } },
  },
  {
    why: '--master-addr [v6]',
    argv: ['--master-addr=[fd00::1]', 't.py'],
    expect: {
      master: { host: 'fd00::1', port: 29_500, ...endpointOrigins('--master-addr, port default') },
    },
  },
  {
    why: 'bare IPv6 --master-addr works (torch joins, then splits at the last colon)',
    argv: ['--master-addr', 'fd00::1', '--master-port=1', 't.py'],
    expect: {
      master: { host: 'fd00::1', port: 1, ...endpointOrigins('--master-addr, port --master-port') },
    },
  },
  {
    why: 'a non-ASCII host name',
    argv: ['--master-addr', 'nœud-1', 't.py'],
    expect: {
      master: { host: 'nœud-1', port: 29_500, ...endpointOrigins('--master-addr, port default') },
    },
  },
  {
    why: 'a port as Python int() reads it',
    argv: ['--master-port', '２９５０１', 't.py'],
    expect: {
      master: {
        host: '127.0.0.1',
        port: 29_501,
        ...endpointOrigins('default, port --master-port'),
      },
    },
  },
  {
    why: 'is_host for c10d',
    argv: ['--rdzv-backend=c10d', '--rdzv-conf', 'is_host=Yes, read_timeout=60', 't.py'],
    expect: { isHost: true },
  },
  {
    why: 'is_host=0',
    argv: ['--rdzv-backend=c10d', '--rdzv-conf=is_host=0', 't.py'],
    expect: { isHost: false },
  },
  {
    why: 'is_host means nothing to static',
    argv: ['--rdzv-conf=is_host=perhaps', 't.py'],
    expect: { isHost: null },
  },
  {
    why: '--local-addr',
    argv: ['--local_addr', '198.18.0.2', 't.py'],
    expect: { localAddr: { value: '198.18.0.2', origin: { name: '--local_addr', from: 'argv' } } },
  },
  {
    why: 'PET_LOCAL_ADDR, which the command line overrides',
    argv: ['t.py'],
    env: { PET_LOCAL_ADDR: 'trainer-0' },
    expect: { localAddr: { value: 'trainer-0', origin: { name: 'PET_LOCAL_ADDR', from: 'pet' } } },
  },
  {
    why: '--local-addr over PET_LOCAL_ADDR',
    argv: ['--local-addr=198.18.0.3', 't.py'],
    env: { PET_LOCAL_ADDR: 'trainer-0' },
    expect: { localAddr: { value: '198.18.0.3', origin: { name: '--local-addr', from: 'argv' } } },
  },
  {
    why: 'a bad PET_ value torchrun does not convert once the command line gives the option',
    argv: ['--master-port=1234', '--max-restarts=1', 't.py'],
    env: { PET_MASTER_PORT: 'abc', PET_MAX_RESTARTS: 'x', MASTER_PORT: 'y' },
    expect: {
      master: { host: '127.0.0.1', port: 1234, ...endpointOrigins('default, port --master-port') },
    },
  },
];

const BAD_VALUES: Row[] = [
  {
    why: 'nnodes a:b',
    argv: ['--nnodes', 'a:b', 't.py'],
    error: {
      type: UsageError,
      message: /^torchrun argument --nnodes: bad value 'a:b': expected N or MIN:MAX/,
    },
  },
  {
    why: 'nnodes 0',
    argv: ['--nnodes=0', 't.py'],
    error: { type: UsageError, message: /--nnodes: bad value '0'.*0 < MIN <= MAX/ },
  },
  {
    why: 'nnodes MIN > MAX',
    argv: ['--nnodes=4:2', 't.py'],
    error: { type: UsageError, message: /--nnodes: bad value '4:2'/ },
  },
  {
    why: 'nnodes with three parts',
    argv: ['--nnodes=1:2:3', 't.py'],
    error: { type: UsageError, message: /--nnodes: bad value '1:2:3'/ },
  },
  {
    why: 'empty PET_NNODES (torchrun takes the empty string)',
    argv: ['t.py'],
    env: { PET_NNODES: '' },
    error: { type: ConfigError, message: /^PET_NNODES: bad value '': expected N or MIN:MAX/ },
  },
  {
    why: 'negative node rank',
    argv: ['--node-rank', '-1', 't.py'],
    error: {
      type: UsageError,
      message: /--node-rank: bad value '-1': expected a node rank, 0 or more/,
    },
  },
  {
    why: 'negative PET_NODE_RANK',
    argv: ['t.py'],
    env: { PET_NODE_RANK: '-2' },
    error: { type: ConfigError, message: /^PET_NODE_RANK: bad value '-2'/ },
  },
  {
    why: 'a static port 0, whose workers would be told port 0 and wait for ever',
    argv: ['--master-port=0', 't.py'],
    error: {
      type: UsageError,
      message:
        /^torchrun argument --master-port: bad value '0': torchrun's static rendezvous tells its workers MASTER_PORT=0 and they wait for ever; for a port torch picks on one node use --rdzv-backend=c10d --rdzv-endpoint=localhost:0, else give a fixed port$/,
    },
  },
  {
    why: 'a static endpoint at port 0, the same',
    argv: ['--rdzv-endpoint=127.0.0.1:0', 't.py'],
    error: {
      type: UsageError,
      message: /--rdzv-endpoint: bad value '127\.0\.0\.1:0': torchrun's static/,
    },
  },
  {
    why: 'a c10d endpoint at port 0 on two nodes, which cannot learn the port',
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint=localhost:0', '--nnodes=2', 't.py'],
    error: {
      type: UsageError,
      message:
        /^torchrun argument --rdzv-endpoint: bad value 'localhost:0': port 0 is a port torch picks on the node that hosts the store, which the other nodes cannot learn, and the job has 2 nodes \(--nnodes\); give the rendezvous a fixed port, e\.g\. localhost:29400$/,
    },
  },
  {
    why: 'the same from PET_RDZV_ENDPOINT: fixed where it was set (78)',
    argv: ['--rdzv-backend=c10d', '--nnodes=1:4', 't.py'],
    env: { PET_RDZV_ENDPOINT: 'localhost:0' },
    error: {
      type: ConfigError,
      message: /^PET_RDZV_ENDPOINT: bad value 'localhost:0': .* up to 4 nodes/,
    },
  },
  {
    why: 'port above 65535',
    argv: ['--master_port', '70000', 't.py'],
    error: {
      type: UsageError,
      message: /--master_port: bad value '70000': expected a port, 1-65535/,
    },
  },
  {
    why: 'non-integer PET_MASTER_PORT',
    argv: ['t.py'],
    env: { PET_MASTER_PORT: 'abc' },
    error: { type: ConfigError, message: /^PET_MASTER_PORT: bad value 'abc': expected an integer/ },
  },
  {
    why: 'non-integer MASTER_PORT',
    argv: ['t.py'],
    env: { MASTER_PORT: '29500x' },
    error: { type: ConfigError, message: /^MASTER_PORT: bad value '29500x': expected a port/ },
  },
  {
    why: 'a port in --master-addr',
    argv: ['--master-addr', 'node1:1234', 't.py'],
    error: {
      type: UsageError,
      message: /--master-addr: bad value 'node1:1234': expected a host name.*without a port/,
    },
  },
  {
    why: 'empty --master-addr',
    argv: ['--master-addr=', 't.py'],
    error: { type: UsageError, message: /--master-addr: bad value ''/ },
  },
  {
    why: 'empty PET_MASTER_ADDR (torchrun takes the empty string)',
    argv: ['t.py'],
    env: { PET_MASTER_ADDR: '' },
    error: { type: ConfigError, message: /^PET_MASTER_ADDR: bad value ''/ },
  },
  {
    why: 'a bare IPv6 endpoint, which torch splits into host 2001:db8: and port 1',
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint=2001:db8::1', 't.py'],
    error: {
      type: UsageError,
      message:
        /--rdzv-endpoint: bad value '2001:db8::1': .*host '2001:db8:' and port 1.*\[addr\]:port/,
    },
  },
  {
    why: 'an endpoint port out of range',
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint=node1:65536', 't.py'],
    error: {
      type: UsageError,
      message: /--rdzv-endpoint: bad value 'node1:65536': the port '65536'/,
    },
  },
  {
    why: 'an endpoint host torch rejects',
    argv: ['--rdzv-backend=c10d', '--rdzv-endpoint=no such host:1', 't.py'],
    error: { type: UsageError, message: /--rdzv-endpoint: bad value 'no such host:1': the host/ },
  },
  {
    why: 'a malformed PET_RDZV_ENDPOINT',
    argv: ['t.py'],
    env: { PET_RDZV_BACKEND: 'c10d', PET_RDZV_ENDPOINT: 'node1:http' },
    error: { type: ConfigError, message: /^PET_RDZV_ENDPOINT: bad value 'node1:http'/ },
  },
  {
    why: 'the static backend needs a port in its endpoint',
    argv: ['--rdzv-endpoint', 'node1', 't.py'],
    error: {
      type: UsageError,
      message: /--rdzv-endpoint: bad value 'node1': the static backend needs a port/,
    },
  },
  {
    why: 'an empty backend',
    argv: ['--rdzv-backend=', 't.py'],
    error: {
      type: UsageError,
      message: /--rdzv-backend: bad value '': expected a rendezvous backend/,
    },
  },
  {
    why: 'a --rdzv-conf pair without a value',
    argv: ['--rdzv-conf=timeout', 't.py'],
    error: {
      type: UsageError,
      message: /--rdzv-conf: bad value 'timeout': 'timeout' has no value/,
    },
  },
  {
    why: 'is_host that is not a boolean, for c10d',
    argv: ['--rdzv-backend=c10d', '--rdzv-conf=is_host=perhaps', 't.py'],
    error: { type: UsageError, message: /is_host=perhaps is not a boolean/ },
  },
  {
    why: 'PET_STANDALONE that int() rejects stops torchrun even with --standalone given',
    argv: ['--standalone', 't.py'],
    env: { PET_STANDALONE: 'yes' },
    error: {
      type: ConfigError,
      message: /^PET_STANDALONE: bad value 'yes': torchrun reads it with int\(\)/,
    },
  },
  {
    why: 'a bad PET_ flag that is not about the shape still stops torchrun',
    argv: ['t.py'],
    env: { PET_NO_PYTHON: 'true' },
    error: { type: ConfigError, message: /^PET_NO_PYTHON: bad value 'true'/ },
  },
  {
    why: 'a bad PET_ value of another option torchrun converts',
    argv: ['t.py'],
    env: { PET_MONITOR_INTERVAL: 'often' },
    error: {
      type: ConfigError,
      message: /^PET_MONITOR_INTERVAL: bad value 'often': expected a number/,
    },
  },
  {
    why: 'an ambiguous abbreviation',
    argv: ['--ma', 'x', 't.py'],
    error: { type: UsageError, message: /--ma: ambiguous/ },
  },
];

/**
 * The rows read as torch 2.6 does (a static single-node default, 2.6 and
 * earlier); what changes with 2.14 and for an unknown torch is below.
 */
const TORCH_2_6 = torchrunTable('2.6.0');

function check(row: Row): void {
  const read = () => readJobShape(row.argv, row.env ?? {}, row.cluster ?? null, TORCH_2_6);
  if (row.error !== undefined) {
    expect(read).toThrow(row.error.type);
    expect(read).toThrow(row.error.message);
    return;
  }
  const shape = read();
  for (const [field, value] of Object.entries(row.expect ?? {})) {
    expect(shape[field as keyof JobShape], field).toEqual(value);
  }
}

describe('readJobShape', () => {
  describe('precedence: argv > PET_* > MASTER_* > cluster > defaults, and fill', () => {
    it.each(PRECEDENCE)('$why', check);
  });
  describe('rendezvous backends and endpoints', () => {
    it.each(RENDEZVOUS)('$why', check);
  });
  describe('bad values: one line naming the option or variable, the value, what is valid', () => {
    it.each(BAD_VALUES)('$why', check);
  });

  it.each(BAD_VALUES)('errors are one line: $why', (row) => {
    let message: string | undefined;
    try {
      readJobShape(row.argv, row.env ?? {}, row.cluster ?? null, TORCH_2_6);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message, 'a bad-values row must throw').toBeTypeOf('string');
    expect(message).not.toContain('\n');
  });

  it("reads an unknown torch's job by the newest torch's rules: a single node with no port is 2.14's c10d", () => {
    expect(readJobShape(['t.py'], {}, null)).toMatchObject({ rdzvBackend: 'c10d', master: null });
    expect(readJobShape(['--nnodes=2', 't.py'], {}, null)).toMatchObject({
      rdzvBackend: 'static',
      master: DEFAULT_MASTER,
    });
  });

  it('reads only the env object it is given', () => {
    const before = { ...process.env };
    process.env.PET_MASTER_ADDR = 'from-process-env';
    try {
      expect(readJobShape(['t.py'], {}, null, TORCH_2_6).master).toEqual(DEFAULT_MASTER);
    } finally {
      process.env = before;
    }
  });
});

describe('last_call_timeout', () => {
  it('is read from --rdzv-conf, in seconds, and torch’s default (30 s) when not given', () => {
    expect(
      readJobShape(c10d('--rdzv-conf', 'last_call_timeout=5'), {}, null).lastCallTimeoutS,
    ).toBe(5);
    expect(
      readJobShape(c10d('--rdzv-conf=join_timeout=900,last_call_timeout= 12 '), {}, null)
        .lastCallTimeoutS,
    ).toBe(12);
    expect(readJobShape(c10d(), {}, null).lastCallTimeoutS).toBe(30);
  });

  it.each([['0'], ['-3'], ['1.5'], ['soon']])(
    'refuses last_call_timeout=%s in one line naming it',
    (value) => {
      const read = () => readJobShape(c10d('--rdzv-conf', `last_call_timeout=${value}`), {}, null);
      expect(read).toThrow(UsageError);
      expect(read).toThrow(`last_call_timeout=${value} is not a positive whole number of seconds`);
      expect(() =>
        readJobShape(c10d(), { PET_RDZV_CONF: `last_call_timeout=${value}` }, null),
      ).toThrow(ConfigError);
    },
  );
});
