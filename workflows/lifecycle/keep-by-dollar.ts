import { type ApplicationFailure, defineSignal, setHandler } from '@temporalio/workflow';
import { killFailure } from '../classify.js';
import { FailureType } from '../domain/failures.js';
import { keepByDollar } from '../domain/policy/keep-by-dollar.js';
import type { LifecycleInput, RentedInstance } from '../domain/types.js';
import { fmtDph, fmtRate } from '../ui/text.js';
import type { Journal } from './journal.js';

const perProof = (dollars: number) => `$${dollars.toFixed(5)} per proof`;

/**
 * Keep by the dollar, after a promote verdict on the benchmark: a host the scaler rented for the fleet is
 * kept only if its $ per proof is within the factor of what the fleet's target costs per proof. A host
 * over it ends `PricedOut` (inconclusive, nothing marked). An operator's deploy (no fleet target) and a
 * store we could not read keep the verdict as it is.
 */
export async function pricedOut(
  input: LifecycleInput,
  journal: Journal,
  inst: RentedInstance,
  rate: number,
): Promise<ApplicationFailure | null> {
  if (input.fleetTargetRate === undefined) return null;
  // One store round, as the journal's other reads a decision needs.
  const promoted = await journal.otherPromotedHosts();
  if (promoted === null) return null;
  const dph = inst.offer.dphTotal;
  const d = keepByDollar({ rate, dph }, promoted, input.fleetTargetRate);
  if (d.keep) return null;
  return killFailure(
    FailureType.PricedOut,
    `${fmtRate(rate)} at ${fmtDph(dph)} is ${perProof(d.costPerProof)}, over ${d.factor}x the ` +
      `${perProof(d.bestCostPerProof)} the fleet's target of ${fmtRate(input.fleetTargetRate)} costs`,
    {
      rate,
      dph,
      costPerProof: d.costPerProof,
      targetCostPerProof: d.bestCostPerProof,
      factor: d.factor,
      fleetTargetRate: input.fleetTargetRate,
    },
  );
}

/** The scaler's order to retire a promoted host for a cheaper one (rebalancing). */
export interface RetireOrder {
  costPerProof: number;
  bestCostPerProof: number;
  factor: number;
  /** The scaler run that decided it. */
  by: string;
}

/** The retirement as the lifecycle ends on it: the market's ending, nothing marked. */
export function retiredFailure(order: RetireOrder): ApplicationFailure {
  return killFailure(
    FailureType.PricedOut,
    `retired for a cheaper host by ${order.by}: ${perProof(order.costPerProof)}, ${order.factor}x or more ` +
      `the fleet's cheapest ${perProof(order.bestCostPerProof)}, and the fleet reaches its target without it`,
    { costPerProof: order.costPerProof, bestCostPerProof: order.bestCostPerProof, factor: order.factor, by: order.by },
  );
}

/**
 * Rebalancing: the scaler retires a promoted host for a cheaper one. A Signal (a workflow cannot send an
 * Update); the next scaler run sends it again if the host is still promoted and still the dearest.
 */
export const retireSignal = defineSignal<[RetireOrder]>('retire');

/** The scaler's orders this lifecycle has had: the watch acts on a retirement, nothing before promotion. */
export function answerScaler(): { retire: RetireOrder | null } {
  const orders: { retire: RetireOrder | null } = { retire: null };
  setHandler(retireSignal, (order) => {
    orders.retire ??= order;
  });
  return orders;
}
