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

/** The host's benchmark reports each finished proof, so the lifecycle's details show progress live. */
export const benchmarkProgressSignal = defineSignal<[BenchmarkProgressReport]>('benchmarkProgress');
