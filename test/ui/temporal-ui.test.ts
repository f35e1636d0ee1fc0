import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve('test-artifacts');
// Flags that keep Chromium off the (closed) network at start-up.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const offer = simOffer();
let env: FleetEnv;
beforeAll(async () => {
  env = await startFleetEnv([offer]);
});
afterAll(async () => env?.close());

// CI installs Chromium (.ci/run); a developer without it is told so instead of getting a silent pass.
describe.runIf(existsSync(CHROMIUM) || process.env.CI)(
  'an operator finds a killed lifecycle in the Temporal UI',
  () => {
    it('filters by FailureType, opens the workflow and sees the failure type', async () => {
      const ui = inject('temporalUiUrl');
      expect(ui, 'the test Temporal server runs with its UI').not.toBe('');
      await fetch(`${env.sim.url}/_sim/offers/${offer.id}/take`, { method: 'POST' });
      const id = `ui-killed-${offer.id}`;
      await expectKilled(env, id, fastRequest(offer.id), 'OfferUnavailable');

      const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
      try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        const query = `FailureType="OfferUnavailable" AND WorkflowId="${id}"`;
        await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
        const link = page.getByRole('link', { name: id }).first();
        await link.waitFor({ timeout: 30_000 });
        await link.click();
        await page.waitForURL((url) => url.pathname.includes(`/workflows/${id}/`), { timeout: 30_000 });
        // The workflow page, once loaded, names the failure type in its failure panel.
        await page.getByText('OfferUnavailable').first().waitFor({ state: 'visible', timeout: 30_000 });
        await page.waitForLoadState('networkidle');
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: path.join(ARTIFACTS, 'ui-killed-lifecycle.png'), fullPage: true });
        expect(await page.locator('body').innerText()).toContain('OfferUnavailable');
      } finally {
        await browser.close();
      }
    });
  },
);
