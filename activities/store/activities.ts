import { ApplicationFailure } from '@temporalio/activity';
import { isRejectingSqlState, STORE_REJECTED } from '../../workflows/domain/store-errors.js';
import type { StoreDeps } from './deps.js';
import * as reads from './fleet-reads.js';
import * as operator from './operator-store.js';
import * as records from './rental-records.js';
import type { RecordOutcomeInput } from './rental-records.js';

export type StoreActivityDeps = StoreDeps;

/** Postgres writes; every one is idempotent because Temporal may run an activity more than once. */
export function createStoreActivities(deps: StoreActivityDeps) {
  return refusalsAreFinal(storeActivities(deps));
}

/**
 * A statement Postgres refused fails for good (StoreRejected); anything else (the server down, restarting,
 * unreachable) stays retryable, so the lifecycle waits for its database instead of failing.
 */
function refusalsAreFinal<T extends Record<string, (input: never) => Promise<unknown>>>(acts: T): T {
  const wrapped: Record<string, (input: never) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(acts)) {
    wrapped[name] = async (input: never) => {
      try {
        return await fn(input);
      } catch (err) {
        const code = (err as { code?: unknown } | null)?.code;
        if (!isRejectingSqlState(code)) throw err;
        throw ApplicationFailure.create({
          type: STORE_REJECTED,
          message: `Postgres refused ${name}: ${err instanceof Error ? err.message : String(err)} (SQLSTATE ${String(code)})`,
          nonRetryable: true,
        });
      }
    };
  }
  return wrapped as T;
}

/** The store's activities by the names the workflows call, each bound to the pool. */
function storeActivities(deps: StoreActivityDeps) {
  return {
    recordInstance: (input: records.RecordInstanceInput) => records.recordInstance(deps, input),
    recordEvent: (input: records.RecordEventInput) => records.recordEvent(deps, input),
    recordBenchmark: (input: records.RecordBenchmarkInput) => records.recordBenchmark(deps, input),
    recordOutcome: (input: RecordOutcomeInput) => records.recordOutcome(deps, input),
    recordPriceMove: (input: Parameters<typeof records.recordPriceMove>[1]) => records.recordPriceMove(deps, input),
    saveLogTail: (input: Parameters<typeof records.saveLogTail>[1]) => records.saveLogTail(deps, input),
    recordOrphanDestroyed: (input: Parameters<typeof records.recordOrphanDestroyed>[1]) =>
      records.recordOrphanDestroyed(deps, input),
    restingMachines: (input: Parameters<typeof reads.restingMachines>[1]) => reads.restingMachines(deps, input),
    machineStanding: (input: Parameters<typeof reads.machineStanding>[1]) => reads.machineStanding(deps, input),
    rentalNumber: (input: Parameters<typeof reads.rentalNumber>[1]) => reads.rentalNumber(deps, input),
    listBadMachines: () => reads.listBadMachines(deps),
    perfSamples: () => reads.perfSamples(deps),
    rentedInstances: () => reads.rentedInstances(deps),
    workflowForLabel: (label: string) => reads.workflowForLabel(deps, label),
    machineRecords: (input: { machineId?: number } = {}) => operator.machineRecords(deps, input),
    markMachine: (input: Parameters<typeof operator.markMachine>[1]) => operator.markMachine(deps, input),
  };
}

export type StoreActivities = ReturnType<typeof createStoreActivities>;
