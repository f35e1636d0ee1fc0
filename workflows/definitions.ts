import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PromoteAnswer, PromoteOverride } from './promote-override.js';
import type { BenchmarkProgressReport, LifecycleStatus } from './domain/types.js';

/** Live status of a lifecycle: stage, deadline, benchmark progress when known. */
export const lifecycleStatusQuery = defineQuery<LifecycleStatus>('status');

/**
 * Operator override: promote at the verdict even if the benchmark is under minRate. An Update, so the
 * operator gets an answer: accepted before the verdict, refused with the verdict after it.
 */
export const promoteOverrideUpdate = defineUpdate<PromoteAnswer, [PromoteOverride]>('promote');

/** Who killed a lifecycle and why: the CLI's `kill` signals it just before its cancel (which carries no words). */
export interface KillRequest {
  reason: string;
  by: string;
}
export const killRequestSignal = defineSignal<[KillRequest]>('killRequest');

/** The host's benchmark reports each finished proof, so the lifecycle's details show progress live. */
export const benchmarkProgressSignal = defineSignal<[BenchmarkProgressReport]>('benchmarkProgress');
