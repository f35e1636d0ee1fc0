/** Small formatting shared by the UI texts: every number with its unit. */

export function fmtMinutes(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  return min < 120 ? `${min} min` : `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}

export function fmtRate(rate: number): string {
  return `${Math.round(rate * 10) / 10} proofs/h`;
}

export function fmtDph(dph: number): string {
  return `$${dph.toFixed(3)}/h`;
}

/** Text for the UI's markdown fields (details, current details): the Temporal UI reads "$…$" as math. */
export function md(text: string): string {
  return text.replace(/\$/g, '\\$');
}
