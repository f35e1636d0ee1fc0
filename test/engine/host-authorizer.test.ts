import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

/**
 * The server's authorizer and claim mapper (infra/temporal/server/hostauth) by their Go tests: every
 * call a host token may and may not make, the control certificate, anonymous calls, and the token
 * vectors test/security/host-token.test.ts also checks. The engine group builds the server with Go, so
 * the toolchain and its build cache are there.
 */
const SERVER_MODULE = fileURLToPath(new URL('../../infra/temporal/server', import.meta.url));

it('go test ./hostauth passes', { timeout: 600_000 }, async () => {
  const { stdout } = await promisify(execFile)('nice', ['-n', '10', 'go', 'test', '-count=1', './hostauth/'], {
    cwd: SERVER_MODULE,
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  expect(stdout).toMatch(new RegExp(`^ok\\s+gpufleet\\.local/temporal-server/hostauth`, 'm'));
});
