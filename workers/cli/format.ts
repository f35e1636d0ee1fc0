/** Human formatting: every number carries its unit. */
import { formatUsd } from '../../workflows/domain/policy/cost.js';

function round(n: number, digits: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

export function fmtRate(rate: number | null | undefined): string {
  return rate === null || rate === undefined ? '-' : `${round(rate, 1)} proofs/h`;
}

export function fmtDph(dph: number | null | undefined): string {
  return dph === null || dph === undefined ? '-' : `$${dph.toFixed(3)}/h`;
}

/** Money as everywhere else (policy/cost.ts formatUsd); '-' for none. */
export function fmtUsd(usd: number | null | undefined): string {
  return usd === null || usd === undefined || !Number.isFinite(usd) ? '-' : formatUsd(usd);
}

export function fmtGb(mb: number): string {
  return `${Math.round(mb / 1024)} GB`;
}

/** A duration in ms as "45 s", "3 min 20 s", "2 h 05 min", "3 d 04 h". */
export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ${String(s % 60).padStart(2, '0')} s`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h ${String(min % 60).padStart(2, '0')} min`;
  return `${Math.floor(h / 24)} d ${String(h % 24).padStart(2, '0')} h`;
}

export function fmtTime(d: Date | string | null | undefined): string {
  if (!d) return '-';
  const date = typeof d === 'string' ? new Date(d) : d;
  return date
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

export type Cell = string | number;

/**
 * A plain aligned table: a header row, no index column, no quotes; numbers right-aligned. Cells are
 * already formatted with their units by the caller.
 */
export function table(rows: Array<Record<string, Cell>>): string {
  const first = rows[0];
  if (!first) return '';
  const cols = Object.keys(first);
  const text = rows.map((r) => cols.map((c) => String(r[c] ?? '')));
  const widths = cols.map((c, i) => Math.max(c.length, ...text.map((t) => (t[i] ?? '').length)));
  const numeric = (cell: string) => /^\$?[0-9.,]+( |$)/.test(cell);
  // Right-aligned: columns of numbers (a '-' for "none" allowed among them).
  const right = cols.map(
    (_, i) => text.some((t) => numeric(t[i] ?? '')) && text.every((t) => numeric(t[i] ?? '') || t[i] === '-'),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...text.map(line)].join('\n');
}

/** Label: value lines, labels aligned. */
export function fields(pairs: Array<[string, string]>): string {
  const w = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join('\n');
}
