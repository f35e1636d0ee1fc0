import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pinnedServerVersion } from '../../infra/temporal/ensure-server.js';
import { searchAttributeFlags } from '../../workflows/domain/search-attributes.js';

// What CI tests (the build pinned in infra/temporal/server/go.mod) must be what the compose stack and the
// Kubernetes notes deploy.
const compose = readFileSync('infra/compose/docker-compose.yml', 'utf8');
const k8s = readFileSync('infra/k8s/values.yaml', 'utf8');
const pinned = pinnedServerVersion().replace(/^v/, '');

/** Tags of temporalio/server and temporalio/admin-tools (the release-versioned images) in a text. */
function serverImageTags(text: string): string[] {
  const tags: string[] = [];
  for (const m of text.matchAll(/temporalio\/(?:server|admin-tools|auto-setup):([\w.-]+)/g)) tags.push(m[1]!);
  for (const m of text.matchAll(
    /repository: (?:temporalio\/(?:server|admin-tools)|gpu-fleet\/temporal-server), tag: ([\w.-]+)/g,
  ))
    tags.push(m[1]!);
  // Our server image (docker/Dockerfile's temporal-server target) as the recipes name it.
  for (const m of text.matchAll(/gpu-fleet\/temporal-server:([\w.-]+)/g)) tags.push(m[1]!);
  return tags;
}

describe('one Temporal server release everywhere', () => {
  it('the pin is a plain release', () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('compose runs the pinned server and admin tools', () => {
    const tags = serverImageTags(compose);
    expect(tags.length).toBeGreaterThanOrEqual(4); // temporal-schema, temporal (base and ours), temporal-setup
    expect(new Set(tags)).toEqual(new Set([pinned]));
  });

  it('the Kubernetes values install the pinned server and admin tools', () => {
    const tags = serverImageTags(k8s);
    expect(tags.length).toBeGreaterThanOrEqual(2);
    expect(new Set(tags)).toEqual(new Set([pinned]));
  });

  it('compose registers exactly the search attributes the workflows use', () => {
    const loop = /for sa in ([^;]+); do/.exec(compose)?.[1] ?? '';
    expect(loop.split(/\s+/).filter(Boolean).sort()).toEqual(searchAttributeFlags().sort());
  });
});
