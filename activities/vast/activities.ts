import { Context, log, sleep } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/domain/failures.js';
import { hostTaskQueue } from '../../workflows/domain/task-queues.js';
import type { BidPolicy, OfferFacts, RentedInstance } from '../../workflows/domain/types.js';
import { changeBid, rentWithBid } from './bids.js';
import { type VastClient, VastHttpError } from './client.js';
import { backoffMs, toVastFailure } from './errors.js';
import { carriedTokenExpiry, tokenExpiry } from './host-token-expiry.js';
import { billedDph, expectedDph } from './pricing.js';
import type { Instance, Offer } from './schemas.js';
import { type InstanceReading, readInstanceState, stoppingEvidence } from './instance-state.js';

export interface VastActivityDeps {
  vast: VastClient;
  /** Environment a rented host needs to poll its own queue; comes from the worker's config, never from history. */
  hostEnv: Record<string, string>;
  /**
   * Mints the rental's own Temporal credential (workers/setup/host-token.ts) when the worker holds the
   * host token key: it goes into the instance's env only, never into the activity's result or a log.
   */
  hostToken?: (rental: { namespace: string; label: string; workflowId: string }) => string;
  pollIntervalMs?: number;
  /**
   * SIM_TIME_SCALE when the worker runs against the simulators (their proofs are that much shorter); 1 in
   * production. Returned with each rental so the lifecycle scales its plausibility bounds (policy/claims.ts).
   */
  clockScale?: number;
}

export interface RentOfferInput {
  offerId: number;
  label: string;
  image: string;
  diskGb: number;
  hostTaskQueue: string;
  /** Rent as an interruptible instance, bidding by this policy (absent: on-demand). */
  bid?: BidPolicy;
}

export interface AwaitRunningInput {
  instanceId: number;
  /** Epoch ms (from workflow time) after which the instance counts as never running. */
  deadlineMs: number;
}

const NEVER_RUNNING_STATES = new Set(['exited', 'unknown', 'offline', 'stopped']);
/** What vast-cli's self-test accepts as gone after a destroy, besides null or a 404. */
const GONE_STATES = new Set(['destroyed', 'terminated']);

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Any failure of a call that must happen (destroy, confirm): retried with backoff whatever it was. */
function retryable(err: unknown, attempt: number): ApplicationFailure {
  const f = toVastFailure(err, attempt);
  if (!f.nonRetryable) return f;
  return ApplicationFailure.create({
    type: FailureType.VastApiError,
    message: f.message,
    nextRetryDelay: backoffMs(attempt),
    details: f.details ? [...f.details] : [],
  });
}

const ERROR_STATUS_MSG = /error|failed|failure|exception|traceback|oci runtime|permission denied/i;

/** cpu_ram is the host's total; a fractional offer (or its instance) gets its share of cores, and RAM with them. */
export function ramShareMb(cpuRamMb: number, cores?: number | null, effective?: number | null): number {
  const share = cores && effective ? Math.min(1, effective / cores) : 1;
  return Math.round(cpuRamMb * share);
}

export interface OfferSearchResult {
  offers: OfferFacts[];
  /** Rows Vast sent that lack what we need (count and the first reason), left out of the ranking. */
  dropped: { count: number; firstReason: string | null };
}

/** The offer as the workflow plans with it, priced for the `diskGb` we rent. */
export function offerFacts(offer: Offer, diskGb: number): OfferFacts {
  return {
    offerId: offer.id,
    machineId: offer.machine_id,
    hostId: offer.host_id,
    gpuName: offer.gpu_name,
    numGpus: offer.num_gpus,
    gpuRamMb: offer.gpu_ram,
    cpuRamMb: ramShareMb(offer.cpu_ram, offer.cpu_cores, offer.cpu_cores_effective),
    dphTotal: expectedDph(offer, diskGb),
    searchedDph: offer.dph_total,
    storageCost: offer.storage_cost ?? null,
    minBid: offer.min_bid ?? null,
  };
}

/** Vast's offer query takes the disk to price storage for as `allocated_storage` (GiB). */
function allocatedStorage(query: Record<string, unknown>): number | null {
  const v = query.allocated_storage;
  return typeof v === 'number' && v > 0 ? v : null;
}

export function createVastActivities(deps: VastActivityDeps) {
  const { vast } = deps;
  const pollMs = deps.pollIntervalMs ?? 10_000;
  const clockScale = deps.clockScale ?? 1;

  async function call<T>(fn: () => Promise<T>, context: { offerId?: number } = {}): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toVastFailure(err, Context.current().info.attempt, context);
    }
  }

  async function findByLabel(label: string): Promise<Instance | undefined> {
    const found = await vast.listInstances({ label: { eq: label } });
    return found.find((i) => i.label === label);
  }

  /** An instance found by our label, taken as this rental: the price Vast bills it, its bid, its token's expiry. */
  function adopt(mine: Instance, facts: OfferFacts, bid: BidPolicy | undefined): RentedInstance {
    return {
      instanceId: mine.id,
      offer: { ...facts, dphTotal: billedDph(mine) ?? facts.dphTotal },
      ...adoptedBid(bid, mine),
      ...carriedTokenExpiry(mine, deps.hostToken !== undefined),
    };
  }

  /**
   * A create that failed may still have made an instance: an error body naming new_contract is destroyed
   * at once; for any other failure but a refused key we look the label up before deciding, so a lost,
   * garbled or late answer is adopted instead of renting twice or leaving an instance nobody knows of.
   */
  async function afterFailedCreate(err: unknown, input: RentOfferInput, offer: Offer): Promise<RentedInstance> {
    const attempt = Context.current().info.attempt;
    if (err instanceof VastHttpError && err.newContract !== undefined) {
      // Vast made it but reports failure (e.g. a spot instance created stopped): nothing may bill unowned.
      await destroyAndConfirm(err.newContract).catch(() => undefined);
      throw toVastFailure(err, attempt, { offerId: input.offerId });
    }
    if (err instanceof VastHttpError && err.isAuth) throw toVastFailure(err, attempt, { offerId: input.offerId });
    let mine: Instance | undefined;
    try {
      mine = await findByLabel(input.label);
    } catch (lookupErr) {
      // Neither the create nor the lookup answered: retry; the next attempt looks the label up first.
      throw ApplicationFailure.create({
        type: FailureType.VastApiError,
        message: `create of offer ${input.offerId} had an uncertain outcome (${errText(err)}) and the label lookup failed (${errText(lookupErr)})`,
        nextRetryDelay: backoffMs(attempt),
        details: [{ offerId: input.offerId }],
      });
    }
    if (mine) {
      log.warn(
        `create of offer ${input.offerId} answered ${errText(err)}, but instance ${mine.id} carries our label: adopted`,
      );
      return adopt(mine, offerFacts(offer, input.diskGb), input.bid);
    }
    throw toVastFailure(err, attempt, { offerId: input.offerId });
  }

  /** DELETE, then a confirming show. Only Vast's word that the instance is gone ends it; anything else is retried. */
  async function destroyAndConfirm(instanceId: number): Promise<{ alreadyGone: boolean }> {
    const attempt = Context.current().info.attempt;
    let alreadyGone = false;
    try {
      await vast.destroyInstance(instanceId);
    } catch (err) {
      if (err instanceof VastHttpError && err.isAuth) throw toVastFailure(err, attempt);
      if (err instanceof VastHttpError && err.isInstanceGone) alreadyGone = true;
      else if (!(err instanceof VastHttpError)) throw retryable(err, attempt);
      // Any other refusal (e.g. 200 success:false): the confirming show below says whether it is gone.
    }
    let after: Instance | null;
    try {
      after = await vast.showInstance(instanceId);
    } catch (err) {
      if (err instanceof VastHttpError && err.isInstanceGone) return { alreadyGone };
      if (err instanceof VastHttpError && err.isAuth) throw toVastFailure(err, attempt);
      // A garbled or lost confirmation is retried like any other answer, never taken as a final failure.
      throw retryable(err, attempt);
    }
    if (after !== null && !GONE_STATES.has(after.actual_status ?? '') && after.cur_state !== 'unloaded') {
      throw ApplicationFailure.create({
        type: FailureType.VastApiError,
        message: `instance ${instanceId} still ${after.actual_status ?? 'present'} after destroy`,
        nextRetryDelay: backoffMs(attempt),
      });
    }
    return { alreadyGone };
  }

  /** The instance's env: the worker's host settings, the rental's queue and, with a token key, its own token. */
  function hostEnvFor(input: RentOfferInput): Record<string, string> {
    const env = { ...deps.hostEnv, HOST_TASK_QUEUE: input.hostTaskQueue, INSTANCE_LABEL: input.label };
    if (!deps.hostToken) return env;
    const internal = (message: string) =>
      ApplicationFailure.create({ type: FailureType.Internal, message, nonRetryable: true });
    // The server lets a token poll host/<label> only: another queue would leave the host polling in vain.
    if (input.hostTaskQueue !== hostTaskQueue(input.label)) {
      throw internal(`host queue ${input.hostTaskQueue} is not ${hostTaskQueue(input.label)}: no host token fits it`);
    }
    const { namespace, workflowExecution } = Context.current().info;
    if (!workflowExecution) throw internal('rentOffer ran outside a workflow: no lifecycle to bind a host token to');
    try {
      const token = deps.hostToken({ namespace, label: input.label, workflowId: workflowExecution.workflowId });
      return { ...env, TEMPORAL_API_KEY: token };
    } catch (err) {
      throw internal(`no host token for this rental: ${errText(err)}`);
    }
  }

  /** Creates the instance once per label (a retry finds the first by its label). */
  async function rent(input: RentOfferInput): Promise<RentedInstance> {
    const mine = await call(() => findByLabel(input.label));
    // A bid search shows the offer with the min_bid that matters for an interruptible rental (vast-api.md §1.3).
    const reread = async () =>
      (
        await call(
          () =>
            vast.searchOffers({
              id: { eq: input.offerId },
              rentable: { eq: true },
              allocated_storage: input.diskGb,
              ...(input.bid ? { type: 'bid' } : {}),
            }),
          { offerId: input.offerId },
        )
      ).find((o) => o.id === input.offerId);
    const offer = await reread();
    if (mine) {
      // RAM is the renter's share either way: from the offer, or from the instance's own cores.
      return adopt(mine, offer ? offerFacts(offer, input.diskGb) : factsFromInstance(input.offerId, mine), input.bid);
    }
    if (!offer) {
      throw ApplicationFailure.create({
        type: FailureType.OfferUnavailable,
        message: `offer ${input.offerId} is no longer listed as rentable`,
        nonRetryable: true,
        details: [{ offerId: input.offerId }],
      });
    }
    const env = hostEnvFor(input);
    const create = (price?: number) =>
      vast.createInstance(input.offerId, {
        image: input.image,
        disk: input.diskGb,
        label: input.label,
        env,
        ...(price === undefined ? {} : { price }),
      });
    if (input.bid) {
      try {
        const r = await rentWithBid(input.offerId, offer, input.bid, { vast, create, destroyAndConfirm, reread });
        const facts = offerFacts(r.offer, input.diskGb);
        // Vast bills an interruptible instance its bid; read back what it bills, storage included.
        const storage = typeof r.offer.dph_base === 'number' ? facts.dphTotal - r.offer.dph_base : 0;
        const billed = (await readBilledDph(r.instanceId)) ?? r.bid.priceDph + storage;
        return {
          instanceId: r.instanceId,
          offer: { ...facts, dphTotal: billed },
          bid: r.bid,
          ...tokenExpiry(env.TEMPORAL_API_KEY),
        };
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err;
        return await afterFailedCreate(err, input, offer);
      }
    }
    try {
      const instanceId = await create();
      const facts = offerFacts(offer, input.diskGb);
      return {
        instanceId,
        offer: { ...facts, dphTotal: (await readBilledDph(instanceId)) ?? facts.dphTotal },
        ...tokenExpiry(env.TEMPORAL_API_KEY),
      };
    } catch (err) {
      return await afterFailedCreate(err, input, offer);
    }
  }

  return {
    /**
     * Re-reads the offer priced for our disk, then rents it and reads the price Vast bills on the
     * instance. Idempotent by label: a retry after a lost answer finds the instance it already created
     * instead of renting a second one, and so does any create whose outcome is uncertain (no answer, a
     * garbled one, an error that may have raced a late request).
     */
    async rentOffer(input: RentOfferInput): Promise<RentedInstance> {
      const rented = await rent(input);
      return clockScale === 1 ? rented : { ...rented, clockScale };
    },

    /** Offer search in Vast's query format; rows that lack what we need are dropped, counted and logged. */
    async searchOffers(query: Record<string, unknown>): Promise<OfferSearchResult> {
      const diskGb = allocatedStorage(query);
      if (diskGb === null) {
        // Without it Vast prices 8 GiB of disk, and every ranking and budget would use a price we never pay.
        throw ApplicationFailure.create({
          type: FailureType.VastApiError,
          message: 'offer search without allocated_storage: send the disk the lifecycle will rent (GiB)',
          nonRetryable: true,
        });
      }
      const { offers, dropped } = await call(() => vast.searchOffersReport(query));
      if (dropped.count > 0) {
        log.warn(`Vast offer search: dropped ${dropped.count} unusable row(s); first: ${dropped.firstReason}`, {
          dropped: dropped.count,
          kept: offers.length,
        });
      }
      return { offers: offers.map((o) => offerFacts(o, diskGb)), dropped };
    },

    /** Every instance this fleet owns, found by its label prefix (the v1 list pages through all). */
    async listFleetInstances(
      labelPrefix: string,
    ): Promise<Array<{ instanceId: number; label: string; status: string | null; machineId: number | null }>> {
      const all = await call(() => vast.listInstances({}));
      return all
        .filter((i) => i.label?.startsWith(labelPrefix))
        .map((i) => ({
          instanceId: i.id,
          label: i.label ?? '',
          status: i.actual_status ?? null,
          machineId: i.machine_id ?? null,
        }));
    },

    /**
     * What Vast bills and reports now (a host can raise its price on a running contract). Never fails:
     * when Vast cannot be read the answer says so (`unreadable`), because our failure to read Vast is no
     * evidence about the host; the watch decides how long it waits that out.
     */
    async instanceState(instanceId: number): Promise<InstanceReading> {
      return readInstanceState(vast, instanceId);
    },

    /** A new bid for an interruptible instance ($/h); `gone` when Vast says the instance no longer exists. */
    async changeBid(input: { instanceId: number; priceDph: number }): Promise<{ priceDph: number; gone: boolean }> {
      return call(() => changeBid(vast, input));
    },

    /** Polls until running; fails fast on states the docs say never reach running. */
    async awaitRunning(input: AwaitRunningInput): Promise<{ status: string }> {
      let last: Instance | null = null;
      for (;;) {
        // A 404 for the instance (not an auth error) is Vast saying it is gone, like a null show.
        last = await call(() =>
          vast.showInstance(input.instanceId).catch((err: unknown) => {
            if (err instanceof VastHttpError && err.isInstanceGone) return null;
            throw err;
          }),
        );
        const status = last?.actual_status ?? null;
        Context.current().heartbeat({ status, statusMsg: last?.status_msg ?? null });
        if (last === null) throw neverRunning(input.instanceId, 'instance vanished (show answered null or 404)', last);
        if (status === 'running' && last.intended_status !== 'stopped') return { status };
        const stopping = stoppingEvidence(last);
        if (stopping) throw neverRunning(input.instanceId, stopping, last);
        if (status !== null && NEVER_RUNNING_STATES.has(status)) {
          throw neverRunning(input.instanceId, `instance went ${status} before running`, last);
        }
        if (last.status_msg && ERROR_STATUS_MSG.test(last.status_msg) && status !== 'loading') {
          throw neverRunning(input.instanceId, `instance reported an error: ${last.status_msg}`, last);
        }
        if (Date.now() >= input.deadlineMs) {
          throw neverRunning(input.instanceId, `instance still ${status ?? 'provisioning'} at its deadline`, last);
        }
        await sleep(Math.min(pollMs, Math.max(100, input.deadlineMs - Date.now())));
      }
    },

    /** Destroys and confirms; an instance that is already gone counts as destroyed. */
    async destroyInstance(instanceId: number): Promise<{ alreadyGone: boolean }> {
      return destroyAndConfirm(instanceId);
    },

    /**
     * Destroys every instance carrying this lifecycle's label: a create whose answer was lost, or whose
     * request reached Vast late, leaves one the lifecycle never learnt the id of.
     */
    async destroyLabelled(label: string): Promise<{ destroyed: number[] }> {
      const found = await call(() => vast.listInstances({ label: { eq: label } }));
      const destroyed: number[] = [];
      for (const inst of found.filter((i) => i.label === label)) {
        await destroyAndConfirm(inst.id);
        destroyed.push(inst.id);
      }
      if (destroyed.length > 0) log.warn(`destroyed instance(s) ${destroyed.join(', ')} labelled ${label}`);
      return { destroyed };
    },
  };

  /**
   * The create answer can come before the read path sees the contract (SkyPilot retries only the read,
   * 3 tries 1 s apart): a price we cannot read yet falls back to the offer's price for our disk.
   */
  async function readBilledDph(instanceId: number): Promise<number | null> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const dph = billedDph(await vast.showInstance(instanceId).catch(() => null));
      if (dph !== null) return dph;
      if (attempt < 3) await sleep(1_000);
    }
    return null;
  }
}

function neverRunning(instanceId: number, message: string, last: Instance | null): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.InstanceNeverRunning,
    message: `instance ${instanceId}: ${message}`,
    nonRetryable: true,
    details: [
      {
        actualStatus: last?.actual_status ?? null,
        intendedStatus: last?.intended_status ?? null,
        curState: last?.cur_state ?? null,
        nextState: last?.next_state ?? null,
        statusMsg: last?.status_msg ?? null,
      },
    ],
  });
}

/** An interruptible rental adopted by its label (a lost create answer): its bid is what Vast bills for compute. */
function adoptedBid(policy: BidPolicy | undefined, inst: Instance): { bid?: RentedInstance['bid'] } {
  if (!policy) return {};
  const price = typeof inst.dph_base === 'number' ? inst.dph_base : (billedDph(inst) ?? policy.maxBidDph);
  const minBid = typeof inst.min_bid === 'number' ? inst.min_bid : null;
  const at = new Date().toISOString();
  return {
    bid: {
      priceDph: price,
      atRentDph: price,
      policy,
      history: {
        bids: [{ at, priceDph: price, minBidDph: minBid, why: 'rent' }],
        prices: [{ at, minBidDph: minBid, status: inst.actual_status ?? null }],
      },
    },
  };
}

/** Facts of an instance found by its label (a lost create answer): RAM is the renter's share, as from the offer. */
export function factsFromInstance(offerId: number, inst: Instance): OfferFacts {
  return {
    offerId,
    machineId: inst.machine_id ?? 0,
    hostId: inst.host_id ?? 0,
    gpuName: inst.gpu_name ?? 'unknown',
    numGpus: inst.num_gpus ?? 1,
    cpuRamMb: ramShareMb(inst.cpu_ram ?? 0, inst.cpu_cores, inst.cpu_cores_effective),
    dphTotal: billedDph(inst) ?? 0,
    storageCost: inst.storage_cost ?? null,
  };
}

export type VastActivities = ReturnType<typeof createVastActivities>;
