/**
 * The variables that steer NCCL 2.22's IB transport, read as NCCL reads them
 * (src/transport/net_ib.cc and src/net.cc at v2.22.3-1; integers through
 * NCCL_PARAM, nccl-param.ts). The environment given is torchrun's, with
 * NCCL's own files below it, as NCCL sees it.
 */
import type { Family } from '../host/host-facts.js';
import { familyOf } from '../host/ip-address.js';
import { ncclIntParam } from '../nccl/nccl-param.js';
import { addressWords, type GidWords } from './gid.js';

export interface IbSettings {
  /** NCCL_NET (envConfigOverride): the one network NCCL may use, by name without case; null: the first that works. */
  net: string | null;
  /** NCCL_IB_DISABLE as given, when it turns the IB transport off (ncclIbInit: ncclParamIbDisable()). */
  disabledBy: string | null;
  /** NCCL_IB_HCA as given (getenv: set, even empty, counts); null when unset. */
  hca: string | null;
  /** NCCL_IB_GID_INDEX; negative (the default, -1) lets NCCL choose. */
  gidIndex: number;
  /** NCCL_IB_ADDR_FAMILY (envIbAddrFamily): AF_INET6 gives IPv6, anything else IPv4. */
  addrFamily: Family;
  /** NCCL_IB_ADDR_RANGE (envIbAddrRange): ADDRESS/BITS of addrFamily; null when unset or malformed. */
  addrRange: { words: GidWords; prefixLength: number } | null;
  /** NCCL_IB_ROCE_VERSION_NUM, default 2. */
  roceVersion: number;
  /** NCCL_IB_ROUTABLE_FLID_GID_INDEX, default 1. */
  routableFlidGidIndex: number;
}

export function ibSettings(env: Readonly<Record<string, string | undefined>>): IbSettings {
  const addrFamily: Family = env.NCCL_IB_ADDR_FAMILY === 'AF_INET6' ? 'ipv6' : 'ipv4';
  return {
    net: env.NCCL_NET ?? null,
    disabledBy: ncclIntParam(env.NCCL_IB_DISABLE, 0) !== 0 ? (env.NCCL_IB_DISABLE ?? null) : null,
    hca: env.NCCL_IB_HCA ?? null,
    gidIndex: ncclIntParam(env.NCCL_IB_GID_INDEX, -1),
    addrFamily,
    addrRange: addrRange(env.NCCL_IB_ADDR_RANGE, addrFamily),
    roceVersion: ncclIntParam(env.NCCL_IB_ROCE_VERSION_NUM, 2),
    routableFlidGidIndex: ncclIntParam(env.NCCL_IB_ROUTABLE_FLID_GID_INDEX, 1),
  };
}

/** Whether NCCL_NET leaves NCCL's IB transport out (strcasecmp against its name, "IB"). */
export function netExcludesIb(settings: IbSettings): boolean {
  return settings.net !== null && settings.net.toLowerCase() !== 'ib';
}

/**
 * envIbAddrRange: inet_pton of the part before '/', strtol of the part after;
 * a mask wider than the family is ignored. (Without a '/', NCCL 2.22 reads
 * through a null pointer; nccl-run takes that as no range.)
 */
function addrRange(value: string | undefined, family: Family): IbSettings['addrRange'] {
  if (value === undefined || value === '') return null;
  const slash = value.indexOf('/');
  if (slash === -1) return null;
  const address = value.slice(0, slash);
  if (familyOf(address) !== family || address.includes('%')) return null;
  const prefixLength = Number.parseInt(/^\s*[+-]?\d+/.exec(value.slice(slash + 1))?.[0] ?? '0', 10);
  if (prefixLength > (family === 'ipv4' ? 32 : 128)) return null;
  return { words: addressWords(address), prefixLength };
}
