import { existsSync } from 'node:fs';
import type { Logger } from '@temporalio/common';
import { bundleWorkflowCode, Runtime } from '@temporalio/worker';
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

/**
 * The source a worker starts from, with development's bundling report (webpack's whole output, which the
 * SDK logs at INFO) at DEBUG: an operator's log starts with the worker, not the bundler.
 */
export async function quietWorkflowSource(): Promise<WorkflowSource | { workflowBundle: { code: string } }> {
  const source = workflowSource();
  if ('workflowBundle' in source) return source;
  const logger = Runtime.instance().logger;
  const quiet: Logger = {
    log: (level, message, meta) => logger.log(level === 'INFO' ? 'DEBUG' : level, message, meta),
    trace: (message, meta) => logger.trace(message, meta),
    debug: (message, meta) => logger.debug(message, meta),
    info: (message, meta) => logger.debug(message, meta),
    warn: (message, meta) => logger.warn(message, meta),
    error: (message, meta) => logger.error(message, meta),
  };
  return { workflowBundle: await bundleWorkflowCode({ workflowsPath: source.workflowsPath, logger: quiet }) };
}
