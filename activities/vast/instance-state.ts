import { type VastClient, VastHttpError } from './client.js';
import type { Instance } from './schemas.js';

/**
 * One reading of a watched instance. `status` null means Vast says it is gone, in one of its documented
 * answers only: show answered `{"instances": null}` or 404 `no_such_instance`/`not_found`
 * (docs/operating.md, "What the product survives"). `unreadable` is set instead when we could not read
 * what Vast says (outage, garbled answer, refused key, an instance object without `actual_status` or
 * with a status Vast does not document): that is no evidence about the host, and the caller must not
 * take it for a lost host.
 */
export interface InstanceReading {
  status: string | null;
  /** $/h Vast bills now (0 when unknown). */
  dph: number;
  unreadable?: string;
  /** What an interruptible rental is judged by (absent when Vast was not read or the instance is gone). */
  market?: {
    /** $/h, the lowest bid that keeps an interruptible instance running now; null when Vast did not say. */
    minBidDph: number | null;
    isBid: boolean | null;
    intendedStatus: string | null;
    curState: string | null;
    nextState: string | null;
    statusMsg: string | null;
  };
}

/**
 * `actual_status` values Vast documents for an instance that exists (vast-api.md §1.9, and `destroyed`
 * / `terminated` from its CLI's self-test). Anything else is an answer we cannot read.
 */
const DOCUMENTED_STATUSES: ReadonlySet<string> = new Set([
  'created',
  'loading',
  'running',
  'stopped',
  'frozen',
  'exited',
  'rebooting',
  'restarting',
  'unknown',
  'offline',
  'destroyed',
  'terminated',
]);

export async function readInstanceState(vast: VastClient, instanceId: number): Promise<InstanceReading> {
  let inst: Instance | null;
  try {
    inst = await vast.showInstance(instanceId);
  } catch (err) {
    if (err instanceof VastHttpError && err.isInstanceGone) return { status: null, dph: 0 };
    return { status: null, dph: 0, unreadable: err instanceof Error ? err.message : String(err) };
  }
  // `{"instances": null}`: Vast's documented "gone".
  if (inst === null) return { status: null, dph: 0 };
  const status = inst.actual_status;
  // An instance object is never "gone": a missing or unknown status is an answer we could not read.
  if (typeof status !== 'string' || !DOCUMENTED_STATUSES.has(status)) {
    const what =
      typeof status === 'string' ? `an undocumented actual_status '${status.slice(0, 40)}'` : 'no actual_status';
    return { status: null, dph: 0, unreadable: `Vast's answer for instance ${instanceId} has ${what}` };
  }
  return {
    status,
    dph: inst.dph_total ?? 0,
    market: {
      minBidDph: inst.min_bid ?? null,
      isBid: inst.is_bid ?? null,
      intendedStatus: inst.intended_status ?? null,
      curState: inst.cur_state ?? null,
      nextState: inst.next_state ?? null,
      statusMsg: inst.status_msg ?? null,
    },
  };
}

/**
 * Vast will not run an instance it intends stopped (an outbid spot, a zero balance, a host that cannot
 * schedule it): dstack fails fast on it, and so does Vast's own self-test. Returns why, or null.
 */
export function stoppingEvidence(inst: Instance): string | null {
  const fields = `intended_status ${inst.intended_status ?? 'null'}, cur_state ${inst.cur_state ?? 'null'}, next_state ${inst.next_state ?? 'null'}, actual_status ${inst.actual_status ?? 'null'}`;
  if (inst.intended_status === 'stopped') return `Vast intends it stopped before it ran (${fields})`;
  if (inst.cur_state === 'stopped' && inst.next_state !== 'running') {
    return `Vast holds it stopped with no start scheduled (${fields})`;
  }
  return null;
}
