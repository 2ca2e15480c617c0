import { STRATEGY_NAMES, type Strategy, type StrategyName } from '../decision.js';
import { agree } from './agree.js';
import { explicit } from './explicit.js';
import { local } from './local.js';
import { multus } from './multus.js';
import { route } from './route.js';
import { speed } from './speed.js';
import { subnet } from './subnet.js';

/** Every strategy by the name --strategy uses. */
export const STRATEGIES: Readonly<Record<StrategyName, Strategy>> = {
  explicit,
  local,
  multus,
  subnet,
  route,
  speed,
  agree,
};

/**
 * The default chain (SPEC --strategy): what the user said beats everything;
 * a single-node job stays on loopback; a pod's second network, where Multus
 * attached one (--network-status); then the network the master is on,
 * then the kernel's route to it, and only with no master to go by the
 * fastest interface. Once one picks, the later ones are not consulted.
 * `agree` is opt-in: it makes every node wait for every other before the
 * chain runs, which only a whole-allocation check (--verify peers) should.
 */
export const DEFAULT_CHAIN: readonly StrategyName[] = STRATEGY_NAMES.filter(
  (name) => name !== 'agree',
);
