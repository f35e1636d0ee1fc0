import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectPromoted } from '../helpers/expect-promoted.js';
import { instanceLifecycle } from '../../workflows/index.js';
import type { OfferFacts } from '../../workflows/domain/types.js';
import { lifecycleStaticDetails, lifecycleStaticSummary } from '../../workflows/ui/summaries.js';
import { expectKilled } from '../helpers/expect-kill.js';
import { fastRequest, type FleetEnv, startFleetEnv } from '../helpers/fleet-env.js';
import { simOffer } from '../helpers/offers.js';
import { savedViews } from '../../workers/cli/views.js';
import { waitUntil } from '../../infra/dev/poll.js';

const until = (what: string, cond: () => Promise<boolean>, ms = 120_000) =>
  waitUntil(what, cond, { timeoutMs: ms, intervalMs: 500 });

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
/** Test-side deadlines for a machine shared by many suites: these tests are about what the UI shows. */
const LOADED_MACHINE = {
  hostConnectSec: 120,
  paramfetchSec: 120,
  paramfetchStallSec: 60,
  daemonReadySec: 60,
  proofDeadlineSec: 120,
  benchmarkSec: 300,
  heartbeatSec: 20,
};
/** The real keep/kill bar: with timeScale the lifecycle converts what it measures, as the demo does. */
const MIN_RATE = 29;

const taken = simOffer();
// 1x RTX 3060 at 600 s/proof cannot reach 29 proofs/h: killed early, after renting (so it cost something).
const slow = simOffer({ gpu_name: 'RTX 3060', num_gpus: 1, dph_total: 0.18, host: { proofSec: 600 } });
const healthy = simOffer({ gpu_name: 'RTX 4090', num_gpus: 2, host: { proofSec: 100 } });
let env: FleetEnv;
let browser: Browser;
beforeAll(async () => {
  env = await startFleetEnv([taken, slow, healthy]);
});
afterAll(async () => {
  await browser?.close();
  await env?.close();
});

/** What `gpu-fleet deploy` passes: the static summary and details from the offer it checked. */
function startMeta(o: typeof slow) {
  const offer: OfferFacts = {
    offerId: o.id,
    machineId: o.machine_id,
    hostId: o.host_id,
    gpuName: o.gpu_name,
    numGpus: o.num_gpus,
    cpuRamMb: o.cpu_ram,
    dphTotal: o.dph_total,
  };
  const facts = { offer, minRate: MIN_RATE, startedBy: 'ui test (as gpu-fleet deploy)' };
  return { staticSummary: lifecycleStaticSummary(facts), staticDetails: lifecycleStaticDetails(facts) };
}

async function openWorkflow(page: Page, id: string, query: string): Promise<void> {
  const ui = inject('temporalUiUrl');
  await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
  const link = page.getByRole('link', { name: id }).first();
  await link.waitFor({ timeout: 30_000 }).catch(async (err: unknown) => {
    await shot(page, `failed-list-${id}`);
    throw err;
  });
  await link.click();
  await page.waitForURL((url) => url.pathname.includes(`/workflows/${id}/`), { timeout: 30_000 });
}

/** The workflow page's "User Metadata" tab: summary, details, current details, events with summaries. */
async function openMetadata(page: Page): Promise<void> {
  await page.getByText('User Metadata', { exact: true }).first().click();
  await page.getByText('Current Details').first().waitFor({ timeout: 30_000 });
  await page.waitForLoadState('networkidle');
  await shot(page, 'last-metadata');
}

/** The page's text, the markdown the UI renders in frames of their own included. */
async function allText(page: Page): Promise<string> {
  const texts = await Promise.all(
    page.frames().map((f) =>
      f
        .locator('body')
        .innerText()
        .catch(() => ''),
    ),
  );
  return texts.join('\n');
}

async function shot(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  writeFileSync(path.join(ARTIFACTS, `${name}.txt`), await allText(page));
}

// CI installs Chromium (.ci/run); a developer without it is told so instead of getting a silent pass.
describe.runIf(existsSync(CHROMIUM) || process.env.CI)('an operator reads lifecycles in the Temporal UI', () => {
  beforeAll(async () => {
    expect(inject('temporalUiUrl'), 'the test Temporal server runs with its UI').not.toBe('');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });

  it('filters by FailureType, opens the workflow and sees the failure type', async () => {
    await fetch(`${env.sim.url}/_sim/offers/${taken.id}/take`, { method: 'POST' });
    const id = `ui-taken-${taken.id}`;
    await expectKilled(env, id, fastRequest(taken.id), 'OfferUnavailable');
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openWorkflow(page, id, `FailureType="OfferUnavailable" AND WorkflowId="${id}"`);
    await page.getByText('OfferUnavailable').first().waitFor({ state: 'visible', timeout: 30_000 });
    await shot(page, 'ui-taken-lifecycle');
    expect(await page.locator('body').innerText()).toContain('OfferUnavailable');
  });

  it('shows a killed lifecycle: failure type, cause and cost in its summary and details, no JSON opened', async () => {
    const id = `ui-killed-${slow.id}`;
    await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [fastRequest(slow.id, { minRate: MIN_RATE, timeouts: LOADED_MACHINE })],
      workflowExecutionTimeout: '8 minutes',
      ...startMeta(slow),
    });
    await expectKilled(env, id, 'already-started', 'BenchRateBelowMin');
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await openWorkflow(page, id, `FailureType="BenchRateBelowMin" AND WorkflowId="${id}"`);
    // The timeline names each stage and each host step, not a row of identical store markers.
    await page.getByText('recordEvent • stage → benchmark').first().waitFor({ timeout: 30_000 });
    await page.getByText('runBenchmark • benchmark 4 proofs ×2 on 1x RTX 3060').first().waitFor();
    await shot(page, 'ui-killed-history');
    await openMetadata(page);
    await shot(page, 'ui-killed-lifecycle');
    const text = await allText(page);
    expect(text).toContain('killed · BenchRateBelowMin during evaluating');
    // Summary: what the lifecycle was started on; current details: type, cause and cost, then the evidence.
    expect(text).toContain(`offer ${slow.id} · 1x RTX 3060 · machine ${slow.machine_id} · $0.180/h`);
    expect(text).toMatch(
      /BenchRateBelowMin during evaluating: stopped early after \d of 4 proofs: 1 GPU cannot exceed/,
    );
    // Real time: the simulators' 100x clock is converted (a 1x RTX 3060 proof takes about 10 min).
    expect(text).toMatch(/cost \$\d+\.\d{2,4} \(\$0\.\d{3}\/h for [\d.]+ (?:min|h)\)/);
    expect(text).toMatch(/1 GPU cannot exceed [\d.]+ proofs\/h, under the minimum of 29 proofs\/h/);
    expect(text).toMatch(/proof\(s\) took .* \(min \/ median \/ max\)/);
    expect(text).toContain('last daemon log lines');
  });

  it('shows a promoted lifecycle: its live rate and cost', async () => {
    const id = `ui-promoted-${healthy.id}`;
    const handle = await env.client.workflow.start(instanceLifecycle, {
      taskQueue: env.taskQueue,
      workflowId: id,
      args: [
        fastRequest(healthy.id, {
          // Generous: on a loaded machine this host must still be promoted and kept.
          minRate: 1,
          timeouts: LOADED_MACHINE,
          watch: { intervalSec: 1, windowSamples: 2, floorRate: 1, samplesPerRun: 3 },
        }),
      ],
      workflowExecutionTimeout: '8 minutes',
      ...startMeta(healthy),
    });
    try {
      await expectPromoted(env.client, id);
      // The watch continues as new every 3 samples; the promoted fleet's view still counts this host once.
      const first = (await handle.describe()).runId;
      await until('a continued run', async () => (await handle.describe()).runId !== first);
      const fleet = savedViews(new Date()).find((v) => v.name === 'promoted-fleet')!;
      const mine = `${fleet.query} AND WorkflowId = "${id}"`;
      await until('the view to count it', async () => (await env.client.workflow.count(mine)).count === 1);
      expect((await env.client.workflow.count(`WorkflowId = "${id}" AND Outcome = "promoted"`)).count).toBeGreaterThan(
        1,
      );
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await openWorkflow(page, id, mine);
      await openMetadata(page);
      // Current details refresh with each watch sample; the page is reloaded until the rate is measured.
      const measured = /promoted · [\d.]+ proofs\/h over/;
      for (let i = 0; i < 20 && !measured.test(await allText(page)); i++) {
        await page.waitForTimeout(2000);
        await page.reload();
        await openMetadata(page);
      }
      await shot(page, 'ui-promoted-lifecycle');
      const text = await allText(page);
      expect(text).toMatch(/promoted · [\d.]+ proofs\/h over [\d.]+ (?:s|min|h) · \$\d+\.\d{2,4} so far/);
    } finally {
      await handle.cancel();
      await handle.result().catch(() => undefined);
    }
  });
});
