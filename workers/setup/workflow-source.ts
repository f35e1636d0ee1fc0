import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
/** This module runs compiled (dist/workers/setup/*.js) in production and as TypeScript under tsx in development. */
const compiled = here.endsWith('.js');

/** The workflows' barrel, next to this build of the code (index.ts under tsx, index.js in dist/). */
export const WORKFLOWS_PATH = path.resolve(path.dirname(here), '../../workflows', compiled ? 'index.js' : 'index.ts');

/** Written by `npm run build` (infra/build/finish-dist.ts): dist/workflow-bundle.js. */
export const WORKFLOW_BUNDLE_PATH = path.resolve(path.dirname(here), '../../workflow-bundle.js');

export type WorkflowSource = { workflowBundle: { codePath: string } } | { workflowsPath: string };

/**
 * Compiled code runs the bundle prepared at build time (no webpack at start-up, and the code that was
 * tested is the code that runs); development bundles the TypeScript sources when the worker starts.
 */
export function workflowSource(): WorkflowSource {
  if (compiled && existsSync(WORKFLOW_BUNDLE_PATH)) return { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } };
  return { workflowsPath: WORKFLOWS_PATH };
}
