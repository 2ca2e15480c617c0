/** An address and port to reach, and how every message writes one. */
export interface Endpoint {
  address: string;
  port: number;
}

/** 198.18.10.1:29500, [2001:db8::1]:29500 */
export function endpointText(endpoint: Endpoint): string {
  return endpoint.address.includes(':')
    ? `[${endpoint.address}]:${endpoint.port}`
    : `${endpoint.address}:${endpoint.port}`;
}
