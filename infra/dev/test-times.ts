import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/**
 * The per-file time table `.ci/run` prints at its end, from vitest's json reports, one per tier:
 * `tsx infra/dev/test-times.ts fast=reports/fast.json e2e=reports/e2e.json ...`. A tier whose run
 * died before writing its report is named as such, so the table still appears when a tier fails.
 */

const Report = z.object({
  numTotalTests: z.number(),
  numPassedTests: z.number(),
  numFailedTests: z.number(),
  numPendingTests: z.number().default(0),
  /** False also when no test failed: a file that failed to load or a hook, or an error outside any test. */
  success: z.boolean().default(true),
  /** When the run started (ms); with the last file's end, the tier's wall time. */
  startTime: z.number(),
  testResults: z.array(
    z.object({
      name: z.string(),
      status: z.string(),
      startTime: z.number(),
      endTime: z.number(),
      /** Why the file failed as a whole (a beforeAll that threw, an import that failed). */
      message: z.string().default(''),
    }),
  ),
});
type Report = z.infer<typeof Report>;

export interface FileTime {
  file: string;
  tier: string;
  seconds: number;
  status: string;
}

export function fileTimes(tier: string, report: Report, root: string): FileTime[] {
  return report.testResults.map((r) => ({
    file: path.relative(root, r.name),
    tier,
    seconds: Math.max(0, r.endTime - r.startTime) / 1000,
    status: r.status,
  }));
}

export function table(rows: FileTime[]): string {
  const sorted = [...rows].sort((a, b) => b.seconds - a.seconds);
  const width = Math.max(4, ...sorted.map((r) => r.file.length));
  const line = (file: string, tier: string, secs: string, status: string) =>
    `${file.padEnd(width)}  ${tier.padEnd(6)}  ${secs.padStart(8)}  ${status}`;
  return [
    line('file', 'tier', 'seconds', 'status'),
    ...sorted.map((r) => line(r.file, r.tier, r.seconds.toFixed(1), r.status)),
  ].join('\n');
}

/**
 * What failed, for the end of the CI output (which is what a reader of a long run sees first): each file
 * that did not pass, with its own message, and a tier that failed with no failed file (an error outside
 * every test, which vitest prints in the tier's log under "Unhandled Errors").
 */
export function failures(tier: string, report: Report, root: string): string[] {
  const lines = report.testResults
    .filter((r) => r.status === 'failed')
    .map((r) => {
      const why = r.message.replace(/\s+/g, ' ').trim().slice(0, 300);
      return `${tier}: FAILED ${path.relative(root, r.name)}${why ? ` — ${why}` : ''}`;
    });
  if (!report.success && lines.length === 0 && report.numFailedTests === 0) {
    lines.push(`${tier}: failed with every test passed or skipped: an error outside the tests (see its log)`);
  }
  return lines;
}

function main(args: string[]): void {
  const root = process.cwd();
  const rows: FileTime[] = [];
  const summaries: string[] = [];
  const failed: string[] = [];
  for (const arg of args) {
    const [tier, file] = arg.split('=');
    if (!tier || !file) throw new Error(`expected tier=report.json, got '${arg}'`);
    if (!existsSync(file)) {
      summaries.push(`${tier}: no report (the run ended before vitest wrote ${file})`);
      continue;
    }
    const report = Report.parse(JSON.parse(readFileSync(file, 'utf8')));
    rows.push(...fileTimes(tier, report, root));
    failed.push(...failures(tier, report, root));
    const lastEnd = Math.max(report.startTime, ...report.testResults.map((r) => r.endTime));
    summaries.push(
      `${tier}: ${report.testResults.length} files, Tests ${report.numPassedTests} passed, ` +
        `${report.numFailedTests} failed, ${report.numPendingTests} skipped (${report.numTotalTests}); ` +
        `${((lastEnd - report.startTime) / 1000).toFixed(0)} s from its start to its last file's end`,
    );
  }
  console.log('\nPer-file test times (slowest first):\n');
  console.log(table(rows));
  console.log('');
  for (const s of summaries) console.log(s);
  for (const f of failed) console.log(f);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main(process.argv.slice(2));
}
