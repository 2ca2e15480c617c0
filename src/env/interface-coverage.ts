/**
 * SPEC "Warnings": a Gloo or TensorPipe interface variable the user set (and
 * nccl-run kept) that does not cover the interface the master is reached
 * through, or the one nccl-run chose. The job would then bootstrap over one network and talk
 * over another, or not reach the master at all.
 */
import type { RouteAnswer } from '../host/host-facts.js';
import { glooInterfaceNames } from '../resolve/gloo-pick.js';

interface Target {
  name: string;
  role: string;
}

/**
 * kept: the user's values nccl-run left alone, already known to be names
 * Gloo and TensorPipe can open (gloo-ifname.ts refuses the others).
 */
export function coverageWarnings(
  kept: Record<string, string>,
  chosen: string,
  routesToMaster: readonly RouteAnswer[],
): string[] {
  const targets = targetsOf(chosen, routesToMaster);
  const warnings: string[] = [];
  const check = (variable: string, covers: (name: string) => boolean, replacement: string) => {
    const value = kept[variable];
    if (value === undefined) return;
    for (const target of targets) {
      if (covers(target.name)) continue;
      // --force fixes only the chosen interface; a route elsewhere is the decision's concern.
      const remedy = target.name === chosen ? `; --force replaces it with ${replacement}` : '';
      warnings.push(
        `${variable}='${value}' (yours, kept) does not cover ${target.name}, ${target.role}${remedy}`,
      );
    }
  };

  // A kept NCCL_SOCKET_IFNAME is judged by what NCCL binds under it (nccl-pick-warnings.ts).
  const gloo = kept.GLOO_SOCKET_IFNAME;
  if (gloo !== undefined) {
    const names = glooInterfaceNames(gloo);
    check('GLOO_SOCKET_IFNAME', (name) => names.includes(name), chosen);
  }
  // TensorPipe takes one exact name (torch/csrc/distributed/rpc/tensorpipe_agent.cpp).
  check('TP_SOCKET_IFNAME', (name) => kept.TP_SOCKET_IFNAME === name, chosen);
  return warnings;
}

/**
 * The chosen interface, and each interface the kernel routes to the master
 * through. A local route means the master is this host: no traffic to it
 * leaves through any interface, so it sets no requirement.
 */
function targetsOf(chosen: string, routesToMaster: readonly RouteAnswer[]): Target[] {
  const viaRoute = new Map<string, string[]>();
  for (const route of routesToMaster) {
    if (route.type === 'local') continue;
    viaRoute.set(route.interface, [...(viaRoute.get(route.interface) ?? []), route.destination]);
  }
  const describe = (destinations: string[]) =>
    `the interface the master ${destinations.join(', ')} is reached through`;
  const targets: Target[] = [];
  const chosenRoute = viaRoute.get(chosen);
  targets.push({
    name: chosen,
    role:
      chosenRoute === undefined
        ? 'the interface nccl-run chose'
        : `the interface nccl-run chose and ${describe(chosenRoute)}`,
  });
  for (const [name, destinations] of viaRoute) {
    if (name !== chosen) targets.push({ name, role: describe(destinations) });
  }
  return targets;
}
