import { z } from 'zod';
import { formatUsd } from '../../workflows/domain/policy/cost.js';

/**
 * What a notification says. A closed list of fields: nothing from the worker's config (keys, URLs,
 * passwords) can ride along, and the workflow that sends it never sees the webhook's URL or secret.
 */
export const NotifyEventSchema = z.object({
  kind: z.enum(['kill', 'promote', 'destroy_failed', 'budget_refusal', 'orphan_destroyed']),
  workflowId: z.string().min(1),
  /** The rental (a workflow id may rent its offer again). */
  rentalKey: z.string().nullable().default(null),
  instanceId: z.number().int().nullable().default(null),
  machineId: z.number().int().nullable().default(null),
  gpu: z.string().nullable().default(null),
  /** Price Vast bills for the instance, $/h. */
  dphUsd: z.number().nonnegative().nullable().default(null),
  failureType: z.string().nullable().default(null),
  /** Benchmark rate, proofs/h on the workflow's clock. */
  rateProofsPerHour: z.number().nonnegative().nullable().default(null),
  /** A kill's cost to date at the destroy, GPU-$ (docs/operating.md, "What it cost"); null when not a kill or nothing was rented. */
  costUsd: z.number().nonnegative().nullable().default(null),
  reason: z.string().max(2000),
  /** When the workflow decided it (ISO 8601). */
  at: z.string().datetime(),
});
export type NotifyEvent = z.input<typeof NotifyEventSchema>;
export type NotifyEventParsed = z.output<typeof NotifyEventSchema>;

const TITLE: Record<NotifyEventParsed['kind'], string> = {
  kill: 'Instance killed',
  promote: 'Instance promoted',
  destroy_failed: 'DESTROY FAILED: instance may still be billing',
  budget_refusal: 'Fleet below target: budget refused more instances',
  orphan_destroyed: 'Orphan instance destroyed',
};

/** One-line human summary for Slack's `text` (the structured event rides alongside). */
export function summary(e: NotifyEventParsed): string {
  const parts = [
    e.instanceId !== null ? `instance ${e.instanceId}` : null,
    e.machineId !== null ? `machine ${e.machineId}` : null,
    e.gpu,
    e.dphUsd !== null ? `$${e.dphUsd}/h` : null,
    e.failureType,
    e.rateProofsPerHour !== null ? `${e.rateProofsPerHour} proofs/h` : null,
    e.costUsd !== null ? `cost ${formatUsd(e.costUsd)}` : null,
  ].filter((p): p is string => p !== null);
  return `${TITLE[e.kind]}: ${parts.join(', ')}${parts.length ? ' — ' : ''}${e.reason} (${e.workflowId})`;
}

/** Slack-compatible body: Slack reads `text`; other receivers read `event`. */
export function webhookBody(e: NotifyEventParsed): { text: string; event: NotifyEventParsed } {
  return { text: summary(e), event: e };
}
