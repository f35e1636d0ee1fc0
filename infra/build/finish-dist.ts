import { cp, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

/**
 * The second half of `npm run build` (after tsc wrote dist/): the workflow bundle the compiled control
 * worker loads (dist/workflow-bundle.js), and the files the compiled code reads beside itself: the cuzk
 * .proto (activities/gpu-host/cuzk-proto.ts) and the SQL migrations (infra/sql/migrate.ts).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.join(root, 'dist');

const { code } = await bundleWorkflowCode({
  workflowsPath: path.join(root, 'workflows/index.ts'),
  logger: new DefaultLogger('WARN'),
});
await writeFile(path.join(dist, 'workflow-bundle.js'), code);

await cp(path.join(root, 'proto/cuzk'), path.join(dist, 'proto/cuzk'), { recursive: true });
await mkdir(path.join(dist, 'infra/sql'), { recursive: true });
for (const f of await readdir(path.join(root, 'infra/sql'))) {
  if (f.endsWith('.sql')) await cp(path.join(root, 'infra/sql', f), path.join(dist, 'infra/sql', f));
}
console.log(`dist/ ready: workflow bundle ${(code.length / 1024 / 1024).toFixed(1)} MiB, proto, migrations`);
