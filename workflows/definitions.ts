import { defineQuery } from '@temporalio/workflow';
import type { LifecycleStatus } from './types.js';

/** Live status of a lifecycle: stage, deadline, benchmark progress when known. */
export const lifecycleStatusQuery = defineQuery<LifecycleStatus>('status');
