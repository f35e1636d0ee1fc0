import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { pinnedServerVersion } from '../../infra/temporal/ensure-server.js';
import { sqlSearchAttributes } from '../../infra/temporal/sql-visibility.js';

// The engine group must really run on the SQL-backed server: if the setup quietly fell back to the dev
// server (SQLite), every other suite in the group would still pass and prove nothing.
let connection: Connection;
beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => connection?.close());

describe('the production engine', () => {
  it('is the pinned server release with PostgreSQL store and visibility', async () => {
    const info = await connection.workflowService.getClusterInfo({});
    expect(info.persistenceStore).toBe('postgres12');
    expect(info.visibilityStore).toBe('postgres12');
    expect(`v${info.serverVersion}`).toBe(pinnedServerVersion());
  });

  it('has our search attributes registered with their types', async () => {
    const listed = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(listed.customAttributes).toMatchObject(sqlSearchAttributes());
  });

  it('answers visibility queries on custom search attributes from its SQL columns', async () => {
    // The setup's probe workflow carried every one of our attributes; SQL visibility indexes them.
    const client = new Client({ connection, namespace: 'default' });
    const found: string[] = [];
    for (let i = 0; i < 40 && found.length === 0; i++) {
      for await (const wf of client.workflow.list({ query: `Outcome = 'probe' AND GpuCount = 0 AND BenchRate = 0` })) {
        found.push(wf.type);
      }
      if (found.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect(found).toContain('searchAttributeProbe');
  });
});
