import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { describe, expect, it, vi } from 'vitest';
import { chainStartOf, chainStartOfRuns, runsByWorkflowId } from '../../workers/cli/age.js';

/**
 * A rental's age counts from the first run of its continue-as-new chain, not from the run that is open
 * now, and never from an earlier rental under the same workflow id. `status` reads it off the describe,
 * `fleet status` off the runs of the whole fleet, listed a query per 50 ids.
 */
const at = (min: number) => new Date(Date.UTC(2026, 11, 6, 8, min));

describe("a rental's start", () => {
  it('walks back over continued-as-new runs and stops at an earlier rental', () => {
    const runs = [
      { start: at(0), status: 'CANCELLED' }, // the offer's first rental, killed
      { start: at(10), status: 'CONTINUED_AS_NEW' },
      { start: at(20), status: 'CONTINUED_AS_NEW' },
      { start: at(30), status: 'RUNNING' },
    ];
    expect(chainStartOfRuns(runs, at(30))).toEqual(at(10));
    expect(chainStartOfRuns(runs.slice(0, 1), at(5))).toEqual(at(5));
  });

  it("status takes the chain's first run from the describe, with one describe more only after a continue-as-new", async () => {
    const describe = vi.fn(async () => ({ startTime: at(10) }));
    const list = vi.fn();
    const client = { workflow: { getHandle: () => ({ describe }), list } } as unknown as Client;
    const desc = (runId: string, firstRunId: string | undefined) =>
      ({
        workflowId: 'instance-offer-7',
        runId,
        startTime: at(30),
        raw: { workflowExecutionInfo: { firstRunId } },
      }) as unknown as WorkflowExecutionDescription;
    expect(await chainStartOf(client, desc('r3', 'r3'))).toEqual(at(30));
    expect(describe).not.toHaveBeenCalled();
    expect(await chainStartOf(client, desc('r3', 'r1'))).toEqual(at(10));
    expect(describe).toHaveBeenCalledTimes(1);
    expect(list).not.toHaveBeenCalled();
  });

  it('fleet status lists the runs of every lifecycle a query per 50 ids, grouped by id', async () => {
    const ids = Array.from({ length: 120 }, (_, i) => `instance-offer-${i + 1}`);
    const queries: string[] = [];
    const client = {
      workflow: {
        list: ({ query }: { query: string }) => {
          queries.push(query);
          const named = [...query.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
          return (async function* () {
            for (const workflowId of named) yield { workflowId, startTime: at(1), status: { name: 'RUNNING' } };
          })();
        },
      },
    } as unknown as Client;
    const runs = await runsByWorkflowId(client, ids);
    expect(queries).toHaveLength(3);
    expect(queries[0]).toMatch(/^WorkflowId IN \("instance-offer-1", "instance-offer-2", /);
    expect([...runs.keys()]).toEqual(ids);
    expect(runs.get('instance-offer-120')).toEqual([{ start: at(1), status: 'RUNNING' }]);
  });
});
