import { Context, sleep } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/failures.js';
import type { OfferFacts, RentedInstance } from '../../workflows/types.js';
import { type VastClient, VastHttpError } from './client.js';
import { toVastFailure } from './errors.js';
import { billedDph, expectedDph } from './pricing.js';
import type { Instance, Offer } from './schemas.js';

export interface VastActivityDeps {
  vast: VastClient;
  /** Environment a rented host needs to poll its own queue; comes from the worker's config, never from history. */
  hostEnv: Record<string, string>;
  pollIntervalMs?: number;
}

export interface RentOfferInput {
  offerId: number;
  label: string;
  image: string;
  diskGb: number;
  hostTaskQueue: string;
}

export interface AwaitRunningInput {
  instanceId: number;
  /** Epoch ms (from workflow time) after which the instance counts as never running. */
  deadlineMs: number;
}

const NEVER_RUNNING_STATES = new Set(['exited', 'unknown', 'offline', 'stopped']);
const ERROR_STATUS_MSG = /error|failed|failure|exception|traceback|oci runtime|permission denied/i;

/** The offer as the workflow plans with it, priced for the `diskGb` we rent. */
export function offerFacts(offer: Offer, diskGb: number): OfferFacts {
  // cpu_ram is the host's total; a fractional offer gets its share of cores, and RAM with them.
  const share =
    offer.cpu_cores && offer.cpu_cores_effective ? Math.min(1, offer.cpu_cores_effective / offer.cpu_cores) : 1;
  return {
    offerId: offer.id,
    machineId: offer.machine_id,
    hostId: offer.host_id,
    gpuName: offer.gpu_name,
    numGpus: offer.num_gpus,
    cpuRamMb: Math.round(offer.cpu_ram * share),
    dphTotal: expectedDph(offer, diskGb),
    searchedDph: offer.dph_total,
    storageCost: offer.storage_cost ?? null,
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

  async function call<T>(fn: () => Promise<T>, context: { offerId?: number } = {}): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toVastFailure(err, Context.current().info.attempt, context);
    }
  }

  return {
    /**
     * Re-reads the offer priced for our disk, then rents it and reads the price Vast bills on the
     * instance. Idempotent by label: a retry after a lost answer finds the instance it already created
     * instead of renting a second one.
     */
    async rentOffer(input: RentOfferInput): Promise<RentedInstance> {
      const existing = await call(() => vast.listInstances({ label: { eq: input.label } }));
      const offers = await call(
        () => vast.searchOffers({ id: { eq: input.offerId }, rentable: { eq: true }, allocated_storage: input.diskGb }),
        { offerId: input.offerId },
      );
      const offer = offers.find((o) => o.id === input.offerId);
      const mine = existing[0];
      if (mine) {
        const facts = offer ? offerFacts(offer, input.diskGb) : factsFromInstance(input.offerId, mine);
        return { instanceId: mine.id, offer: { ...facts, dphTotal: billedDph(mine) ?? facts.dphTotal } };
      }
      if (!offer) {
        throw ApplicationFailure.create({
          type: FailureType.OfferUnavailable,
          message: `offer ${input.offerId} is no longer listed as rentable`,
          nonRetryable: true,
          details: [{ offerId: input.offerId }],
        });
      }
      try {
        const instanceId = await vast.createInstance(input.offerId, {
          image: input.image,
          disk: input.diskGb,
          label: input.label,
          env: { ...deps.hostEnv, HOST_TASK_QUEUE: input.hostTaskQueue, INSTANCE_LABEL: input.label },
        });
        const facts = offerFacts(offer, input.diskGb);
        return { instanceId, offer: { ...facts, dphTotal: (await readBilledDph(instanceId)) ?? facts.dphTotal } };
      } catch (err) {
        // An error can still have created an instance: destroy it so nothing bills unowned.
        if (err instanceof VastHttpError && err.newContract !== undefined) {
          await vast.destroyInstance(err.newContract).catch(() => undefined);
        }
        throw toVastFailure(err, Context.current().info.attempt, { offerId: input.offerId });
      }
    },

    /** Offer search in Vast's query format; only offers that parse are returned (bad rows are reported). */
    async searchOffers(query: Record<string, unknown>): Promise<OfferFacts[]> {
      const diskGb = allocatedStorage(query);
      if (diskGb === null) {
        // Without it Vast prices 8 GiB of disk, and every ranking and budget would use a price we never pay.
        throw ApplicationFailure.create({
          type: FailureType.VastApiError,
          message: 'offer search without allocated_storage: send the disk the lifecycle will rent (GiB)',
          nonRetryable: true,
        });
      }
      const offers = await call(() => vast.searchOffers(query));
      return offers.map((o) => offerFacts(o, diskGb));
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

    /** What Vast bills and reports now; a host can raise its price on a running contract. */
    async instanceState(instanceId: number): Promise<{ status: string | null; dph: number }> {
      const inst = await call(() => vast.showInstance(instanceId));
      return { status: inst?.actual_status ?? null, dph: inst?.dph_total ?? 0 };
    },

    /** Polls until running; fails fast on states the docs say never reach running. */
    async awaitRunning(input: AwaitRunningInput): Promise<{ status: string }> {
      let last: Instance | null = null;
      for (;;) {
        last = await call(() => vast.showInstance(input.instanceId));
        const status = last?.actual_status ?? null;
        Context.current().heartbeat({ status, statusMsg: last?.status_msg ?? null });
        if (last === null) throw neverRunning(input.instanceId, 'instance vanished (show returned null)', last);
        if (status === 'running' && last.intended_status !== 'stopped') return { status };
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
      let alreadyGone = false;
      try {
        await vast.destroyInstance(instanceId);
      } catch (err) {
        if (err instanceof VastHttpError && (err.status === 404 || err.errorCode === 'no_such_instance')) {
          alreadyGone = true;
        } else {
          throw toVastFailure(err, Context.current().info.attempt);
        }
      }
      const after = await call(() => vast.showInstance(instanceId));
      if (after !== null && after.actual_status !== 'destroyed') {
        throw ApplicationFailure.create({
          type: FailureType.VastApiError,
          message: `instance ${instanceId} still ${after.actual_status ?? 'present'} after destroy`,
        });
      }
      return { alreadyGone };
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
        statusMsg: last?.status_msg ?? null,
      },
    ],
  });
}

function factsFromInstance(offerId: number, inst: Instance): OfferFacts {
  return {
    offerId,
    machineId: inst.machine_id ?? 0,
    hostId: inst.host_id ?? 0,
    gpuName: inst.gpu_name ?? 'unknown',
    numGpus: inst.num_gpus ?? 1,
    cpuRamMb: inst.cpu_ram ?? 0,
    dphTotal: billedDph(inst) ?? 0,
    storageCost: inst.storage_cost ?? null,
  };
}

export type VastActivities = ReturnType<typeof createVastActivities>;
