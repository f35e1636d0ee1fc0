import { describe, expect, it } from 'vitest';
import {
  hostTaskQueue,
  instanceLabel,
  LABEL_PREFIX,
  lifecycleWorkflowId,
  rentalKey,
  workflowIdOfLabel,
} from '../../workflows/domain/task-queues.js';

const runA = '01a24355-1bec-7384-9380-c07366d46926';
const runB = '01a24355-1bec-7384-9380-c07366d46927';

describe('rental identity', () => {
  it('one workflow id per offer; one key, label and host queue per rental of it', () => {
    const id = lifecycleWorkflowId(32714145);
    expect(id).toBe('instance-offer-32714145');
    const [a, b] = [rentalKey(id, runA), rentalKey(id, runB)];
    expect(a).toBe(`instance-offer-32714145.${runA}`);
    expect(instanceLabel(a)).not.toBe(instanceLabel(b));
    expect(hostTaskQueue(instanceLabel(a))).toBe(`host/gpufleet-instance-offer-32714145.${runA}`);
  });

  it('a long workflow id is cut so the label still ends in the whole run id', () => {
    const long = 'x'.repeat(300);
    const [a, b] = [instanceLabel(rentalKey(long, runA)), instanceLabel(rentalKey(long, runB))];
    expect(a.endsWith(runA)).toBe(true);
    expect(a).not.toBe(b);
    expect(a.length).toBeLessThanOrEqual(LABEL_PREFIX.length + 100);
  });

  it('finds the workflow id behind a label, for rental keys and for labels from before them', () => {
    const id = lifecycleWorkflowId(7);
    expect(workflowIdOfLabel(instanceLabel(rentalKey(id, runA)))).toBe(id);
    expect(workflowIdOfLabel(instanceLabel('instance-offer-7-1'))).toBe('instance-offer-7-1');
  });
});
