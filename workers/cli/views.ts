import { ALL_FAILURE_TYPES } from '../../workflows/domain/failures.js';
import { SA } from '../../workflows/domain/search-attributes.js';
// Type-only: the names are checked against the registered workflows without loading their code.
import type * as Workflows from '../../workflows/index.js';
import { LIFECYCLE_WORKFLOW_TYPE } from '../../workflows/domain/task-queues.js';

/** Workflow types the CLI runs for admin actions and the offer search: never lifecycles, so views filter them out. */
export const ADMIN_WORKFLOW_TYPES = ['offerCheck', 'offerReport', 'machineAdmin', 'webhookCheck'] satisfies Array<
  keyof typeof Workflows
>;

const LIFECYCLES = `WorkflowType = "${LIFECYCLE_WORKFLOW_TYPE}"`;

export interface SavedView {
  name: string;
  what: string;
  query: string;
}

/** UTC midnight of `now`, as visibility queries take it. */
export function startOfDayUtc(now: Date): string {
  return `${now.toISOString().slice(0, 10)}T00:00:00Z`;
}

/**
 * The operator's saved views as visibility queries. Every one names the lifecycle type, so admin and
 * report runs never show; the promoted fleet counts running runs only, so a host whose watch continued
 * as new is one row, not one per run.
 */
export function savedViews(now: Date, machineId?: string): SavedView[] {
  const today = startOfDayUtc(now);
  const views: SavedView[] = [
    { name: 'lifecycles', what: 'every lifecycle, no admin or report runs', query: LIFECYCLES },
    {
      name: 'killed-today',
      what: 'killed since midnight UTC (add a FailureType column, or use the per-type views)',
      query: `${LIFECYCLES} AND ${SA.outcome.name} = "killed" AND CloseTime >= "${today}"`,
    },
    {
      name: 'benchmarking-now',
      what: 'benchmarking now',
      query: `${LIFECYCLES} AND ${SA.stage.name} = "benchmark" AND ExecutionStatus = "Running"`,
    },
    {
      name: 'promoted-fleet',
      what: 'the promoted fleet, one row per host (add BenchRate and DollarsPerHour columns)',
      query: `${LIFECYCLES} AND ${SA.outcome.name} = "promoted" AND ExecutionStatus = "Running"`,
    },
    {
      name: 'admin',
      what: 'admin and report runs made by the CLI',
      query: `WorkflowType IN (${ADMIN_WORKFLOW_TYPES.map((t) => `"${t}"`).join(', ')})`,
    },
  ];
  if (machineId !== undefined)
    views.push({
      name: `machine-${machineId}`,
      what: `machine ${machineId}'s history, every rental on it`,
      query: `${LIFECYCLES} AND ${SA.machineId.name} = "${machineId}"`,
    });
  return views;
}

/** One view per failure type, killed since midnight UTC. */
export function killedTodayByType(now: Date): SavedView[] {
  const today = startOfDayUtc(now);
  return ALL_FAILURE_TYPES.map((type) => ({
    name: `killed-today-${type}`,
    what: `killed since midnight UTC: ${type}`,
    query: `${LIFECYCLES} AND ${SA.failureType.name} = "${type}" AND CloseTime >= "${today}"`,
  }));
}

/** The Temporal UI's workflow list for a query. */
export function listUrl(uiBase: string, namespace: string, query: string): string {
  return `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(query)}`;
}
