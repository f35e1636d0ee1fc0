import { proxyLocalActivities } from '@temporalio/workflow';
import type { StoreActivities } from '../activities/store/activities.js';
import { storeOptions } from './activity-options.js';
import type { ReportBy, SpendReport } from './domain/policy/spend-report.js';

const store = proxyLocalActivities<StoreActivities>(storeOptions);

/** The fleet's spend, delivered proofs and waste since a time (the CLI's `report`); the database stays with the worker. */
export async function fleetReport(input: { since: string; by: ReportBy | null }): Promise<SpendReport> {
  return await store.spendReport(input);
}
