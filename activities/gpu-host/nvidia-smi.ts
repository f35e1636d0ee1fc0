/**
 * Reading nvidia-smi as real hosts print it (test/fixtures/nvidia-smi names the source of each form):
 * the banner before driver 610 ("Driver Version: … CUDA Version: …") and from it ("KMD Version: … CUDA
 * UMD Version: …"), the `--query-gpu` csv with `[N/A]`/`[Not Supported]` fields, and the failures the
 * tool documents. What it cannot read it says so (`unreadable`), never as a fault of the host.
 */

/** Which banner nvidia-smi printed: `driver` before 610, `kmd` from 610 (the driver version is the KMD's). */
export type SmiForm = 'driver' | 'kmd';

export interface SmiBanner {
  form: SmiForm;
  /** The banner's driver (or KMD) version. */
  driverVersion: string | null;
  /** The highest CUDA the driver supports; `N/A` when the driver says so (no CUDA on this host). */
  cudaVersion: number | 'N/A';
}

const VERSION = '([0-9]+(?:\\.[0-9]+)*|N/A)';
const CUDA = '([0-9]+(?:\\.[0-9]+)?|N/A)';

/** The banner of plain `nvidia-smi`, or null when it is in neither known form. */
export function readSmiBanner(text: string): SmiBanner | null {
  const kmd = new RegExp(`KMD Version:\\s*${VERSION}`).exec(text)?.[1];
  const umd = new RegExp(`CUDA UMD Version:\\s*${CUDA}`).exec(text)?.[1];
  if (kmd !== undefined && umd !== undefined) return banner('kmd', kmd, umd);
  const driver = new RegExp(`Driver Version:\\s*${VERSION}`).exec(text)?.[1];
  const cuda = new RegExp(`CUDA Version:\\s*${CUDA}`).exec(text)?.[1];
  if (driver !== undefined && cuda !== undefined) return banner('driver', driver, cuda);
  return null;
}

function banner(form: SmiForm, driver: string, cuda: string): SmiBanner {
  return {
    form,
    driverVersion: driver === 'N/A' ? null : driver,
    cudaVersion: cuda === 'N/A' ? 'N/A' : Number(cuda),
  };
}

/** The fields the gate asks for; `kmd_version` only of a driver whose banner is the KMD form (older ones refuse it). */
export function smiQueryFields(form: SmiForm): string[] {
  return ['index', 'name', 'memory.total', 'uuid', 'driver_version', ...(form === 'kmd' ? ['kmd_version'] : [])];
}

export function smiQueryArgs(form: SmiForm): string[] {
  return [`--query-gpu=${smiQueryFields(form).join(',')}`, '--format=csv,noheader,nounits'];
}

/** A field nvidia-smi could not give: `[N/A]`, `[Not Supported]`, `[Unknown Error]`… (its own words). */
export interface SmiMissing {
  missing: string;
}
export type SmiField = string | SmiMissing;

export const isMissing = (f: SmiField | undefined): f is SmiMissing => typeof f === 'object' && f !== null;

/** The csv rows, each field by name; throws naming the line when a row is not what was asked for. */
export function readSmiQuery(text: string, fields: readonly string[]): Array<Record<string, SmiField>> {
  const rows: Array<Record<string, SmiField>> = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const cells = line.split(',').map((c) => c.trim());
    if (cells.length !== fields.length) {
      throw new Error(`nvidia-smi row "${line.slice(0, 200)}" has ${cells.length} fields, ${fields.length} asked`);
    }
    rows.push(Object.fromEntries(fields.map((f, i) => [f, field(cells[i] ?? '')])));
  }
  return rows;
}

function field(cell: string): SmiField {
  const m = /^\[(.+)\]$/.exec(cell);
  if (m?.[1]) return { missing: `[${m[1]}]` };
  return cell === '' || cell === 'N/A' ? { missing: cell || '(empty)' } : cell;
}

/**
 * A failure nvidia-smi documents, from what it printed: evidence against the host. Null for output we
 * do not recognise (then the probe is unreadable, not the host unfit).
 */
export function smiFailure(output: string): string | null {
  for (const [pattern, what] of SMI_FAILURES) if (pattern.test(output)) return what;
  return null;
}

const SMI_FAILURES: ReadonlyArray<[RegExp, string]> = [
  [/couldn't communicate with the NVIDIA driver/i, 'no NVIDIA driver'],
  [/Driver\/library version mismatch/i, 'NVML/driver version mismatch'],
  [/No devices were found/i, 'no GPU devices'],
  [/GPU is lost|fallen off the bus|Unable to determine the device handle for GPU/i, 'a GPU has fallen off the bus'],
];
