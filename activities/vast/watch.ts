import { changeBid as placeBid } from './bids.js';
import { call } from './call.js';
import type { VastActivityDeps } from './deps.js';
import { type InstanceReading, readInstanceState } from './instance-state.js';

/**
 * What Vast bills and reports now (a host can raise its price on a running contract). Never fails:
 * when Vast cannot be read the answer says so (`unreadable`), because our failure to read Vast is no
 * evidence about the host; the watch decides how long it waits that out.
 */
export async function instanceState(deps: VastActivityDeps, instanceId: number): Promise<InstanceReading> {
  return readInstanceState(deps.vast, instanceId);
}

/** A new bid for an interruptible instance ($/h); `gone` when Vast says the instance no longer exists. */
export async function changeBid(
  deps: VastActivityDeps,
  input: { instanceId: number; priceDph: number },
): Promise<{ priceDph: number; gone: boolean }> {
  return call(() => placeBid(deps.vast, input));
}
