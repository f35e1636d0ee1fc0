#!/usr/bin/env node
// The `gpu-fleet` command (package.json "bin"): loads the TypeScript CLI through tsx from any directory.
import { register } from 'tsx/esm/api';

register();
await import('../workers/cli.ts');
