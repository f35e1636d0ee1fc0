import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { LifecycleStatus } from './types.js';

/** Live status of a lifecycle: stage, deadline, benchmark progress when known. */
export const lifecycleStatusQuery = defineQuery<LifecycleStatus>('status');

/** Operator override: promote at the verdict even if the benchmark is under minRate. */
export const promoteOverrideSignal = defineSignal<[{ operator: string; reason: string }]>('promoteOverride');
