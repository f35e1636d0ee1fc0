import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes; the dev-server script registers exactly these. */
export const SA = {
  stage: defineSearchAttributeKey('LifecycleStage', SearchAttributeType.KEYWORD),
  gpuModel: defineSearchAttributeKey('GpuModel', SearchAttributeType.KEYWORD),
  gpuCount: defineSearchAttributeKey('GpuCount', SearchAttributeType.INT),
  machineId: defineSearchAttributeKey('MachineId', SearchAttributeType.KEYWORD),
  offerId: defineSearchAttributeKey('OfferId', SearchAttributeType.INT),
  vastInstanceId: defineSearchAttributeKey('VastInstanceId', SearchAttributeType.INT),
  benchRate: defineSearchAttributeKey('BenchRate', SearchAttributeType.DOUBLE),
  dollarsPerHour: defineSearchAttributeKey('DollarsPerHour', SearchAttributeType.DOUBLE),
  /** GPU-$ the rental has cost (real, at the billed price), as of its last stage change or run. */
  costUsd: defineSearchAttributeKey('CostUsd', SearchAttributeType.DOUBLE),
  /** When CostUsd was counted (workflow time): a list counts on from it at DollarsPerHour, to a cost to date. */
  costCountedAt: defineSearchAttributeKey('CostCountedAt', SearchAttributeType.DATETIME),
  /**
   * Which rental of its offer this lifecycle is ("1", "2", …): re-rents of one offer share a workflow id.
   * A keyword (`RentalNumber = "2"`): the dev server allows three Int attributes, all taken.
   */
  rentalNumber: defineSearchAttributeKey('RentalNumber', SearchAttributeType.KEYWORD),
  failureType: defineSearchAttributeKey('FailureType', SearchAttributeType.KEYWORD),
  outcome: defineSearchAttributeKey('Outcome', SearchAttributeType.KEYWORD),
} as const;

/** `name=Type` pairs in the form `temporal server start-dev --search-attribute` takes. */
export function searchAttributeFlags(): string[] {
  const cliType: Record<string, string> = {
    [SearchAttributeType.KEYWORD]: 'Keyword',
    [SearchAttributeType.INT]: 'Int',
    [SearchAttributeType.DOUBLE]: 'Double',
    [SearchAttributeType.DATETIME]: 'Datetime',
  };
  return Object.values(SA).map((key) => `${key.name}=${cliType[key.type] ?? 'Keyword'}`);
}
