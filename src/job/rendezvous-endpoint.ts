/**
 * A rendezvous endpoint read as torch reads it
 * (torch/distributed/elastic/rendezvous/utils.py `parse_rendezvous_endpoint`),
 * then checked for what torch accepts but cannot use.
 */
import { isIP } from 'node:net';
import { pythonStrip } from '../torch/python-builtins.js';

export type EndpointReading =
  | { host: string; port: number | null; problem?: undefined }
  | { problem: string };

/** utils.py: `^[\w\.:-]+$`, where Python's \w is any Unicode letter or number, or `_`. */
const TORCH_HOST = /^[\p{L}\p{N}_.:-]+$/u;
/** utils.py `_try_parse_port`. */
const TORCH_PORT = /^[0-9]{1,5}$/;

/**
 * `host`, `host:port`, `[v6]`, `[v6]:port`. port is null where the endpoint
 * names none (the backend's default applies); host is "localhost" for an
 * empty endpoint, as in torch.
 */
export function readRendezvousEndpoint(endpoint: string): EndpointReading {
  const text = pythonStrip(endpoint);
  if (text === '') return { host: 'localhost', port: null };

  // torch: brackets around the whole endpoint mean an IPv6 address with no
  // port; otherwise it splits at the LAST ':', so a bare IPv6 address loses
  // its last group to the port.
  let host = text;
  let portText: string | null = null;
  if (!(text.startsWith('[') && text.endsWith(']'))) {
    const colon = text.lastIndexOf(':');
    if (colon !== -1) {
      host = text.slice(0, colon);
      portText = text.slice(colon + 1);
    }
  }
  if (host.length > 1 && host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);

  let port: number | null = null;
  if (portText !== null) {
    // utils.py refuses only `port >= 2**16`: port 0 is a port the store's host picks (job/port-zero.ts).
    port = TORCH_PORT.test(portText) ? Number(portText) : Number.NaN;
    if (!(port >= 0 && port <= 65_535)) {
      return { problem: `the port '${portText}' is not one of 0-65535` };
    }
  }
  if (!TORCH_HOST.test(host)) {
    return {
      problem: `the host '${host}' is not a host name, an IPv4 address or an IPv6 address (write IPv6 as [addr] or [addr]:port)`,
    };
  }
  if (host.includes(':') && isIP(host) !== 6) {
    return {
      problem: `torchrun splits it at the last ':' into host '${host}' and port ${port}, and that host is not an address; write IPv6 as [addr] or [addr]:port`,
    };
  }
  return { host, port };
}
