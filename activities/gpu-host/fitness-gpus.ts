import type { FitnessMeasurement, UnreadableProbe } from '../../workflows/domain/policy/fitness.js';
import {
  isMissing,
  readSmiBanner,
  readSmiQuery,
  type SmiField,
  smiFailure,
  type SmiForm,
  smiQueryArgs,
  smiQueryFields,
} from './nvidia-smi.js';
import { type CommandResult, runCommand } from './run-command.js';
import type { SpawnHostProcess } from './spawn.js';

export type GpuMeasurement = Pick<
  FitnessMeasurement,
  'gpus' | 'driverError' | 'driverVersion' | 'cudaVersion' | 'smiForm' | 'smiOutput'
> & { unreadable: UnreadableProbe | null };

/** The raw output an operator reports with an unreadable verdict: enough to see the form, small in history. */
export const trimOutput = (s: string) => s.trim().slice(0, 2000);
/** A failure's first lines, for its message. */
export const firstLines = (s: string) => s.trim().split('\n').slice(0, 3).join(' / ').slice(0, 500);

const NONE: GpuMeasurement = {
  gpus: [],
  driverError: null,
  driverVersion: null,
  cudaVersion: null,
  smiForm: null,
  unreadable: null,
};

/**
 * What the run says when it is not an answer: a failure nvidia-smi documents (evidence: the driver or a
 * GPU is broken), or a run we could not make or read (no evidence either way). Null for an answer.
 */
function notAnAnswer(r: CommandResult, what: string, timeoutMs: number): GpuMeasurement | null {
  const output = r.stdout + r.stderr;
  if (r.startError !== undefined || r.timedOut) {
    const why = r.startError ?? `no answer within ${timeoutMs / 1000} s`;
    return { ...NONE, unreadable: { probe: 'nvidia-smi', why: `${what}: ${why}`, output: trimOutput(output) } };
  }
  const failure = smiFailure(output);
  if (failure !== null) return { ...NONE, driverError: `${failure} (exit ${r.code}): ${firstLines(output)}` };
  if (r.code !== 0) {
    const why = `${what} exited ${r.code} with output we do not recognise`;
    return { ...NONE, unreadable: { probe: 'nvidia-smi', why, output: trimOutput(output) } };
  }
  return null;
}

const unreadable = (why: string, output: string): GpuMeasurement => ({
  ...NONE,
  unreadable: { probe: 'nvidia-smi', why, output: trimOutput(output) },
});

/**
 * GPUs, driver and CUDA from nvidia-smi: the banner first (a broken driver says so there, and its form
 * tells which query fields the driver has), then the query, whose fields win over the banner's.
 */
export async function measureGpus(
  nvidiaSmi: string[],
  timeoutMs: number,
  spawn?: SpawnHostProcess,
): Promise<GpuMeasurement> {
  const bannerRun = await runCommand(nvidiaSmi, timeoutMs, spawn);
  const bannerFail = notAnAnswer(bannerRun, 'nvidia-smi', timeoutMs);
  if (bannerFail) return bannerFail;
  const banner = readSmiBanner(bannerRun.stdout);
  if (!banner) return unreadable('a banner in neither known form (Driver Version / KMD Version)', bannerRun.stdout);
  let fields: SmiForm = banner.form;
  let query = await runCommand([...nvidiaSmi, ...smiQueryArgs(fields)], timeoutMs, spawn);
  // A KMD banner from a driver that does not know kmd_version after all: ask what every driver knows.
  if (fields === 'kmd' && query.code !== 0 && /not a valid field/i.test(query.stdout + query.stderr)) {
    fields = 'driver';
    query = await runCommand([...nvidiaSmi, ...smiQueryArgs(fields)], timeoutMs, spawn);
  }
  const queryFail = notAnAnswer(query, 'nvidia-smi --query-gpu', timeoutMs);
  if (queryFail) return queryFail;
  let rows: Array<Record<string, SmiField>>;
  try {
    rows = readSmiQuery(query.stdout, smiQueryFields(fields));
  } catch (err) {
    return unreadable(err instanceof Error ? err.message : String(err), query.stdout);
  }
  const gpus = [];
  for (const row of rows) {
    const index = row.index;
    if (isMissing(index) || index === undefined || !/^\d+$/.test(index)) {
      return unreadable(`a GPU row without an index`, query.stdout);
    }
    gpus.push(gpuOf(Number(index), row));
  }
  const version = (f: SmiField | undefined) => (f === undefined || isMissing(f) ? null : f);
  return {
    gpus,
    driverError: null,
    driverVersion: version(row0(rows, 'kmd_version')) ?? version(row0(rows, 'driver_version')) ?? banner.driverVersion,
    cudaVersion: banner.cudaVersion === 'N/A' ? null : banner.cudaVersion,
    smiForm: banner.form,
    unreadable: null,
    ...(gpus.some((g) => g.notGiven !== undefined) ? { smiOutput: trimOutput(query.stdout) } : {}),
  };
}

const row0 = (rows: Array<Record<string, SmiField>>, f: string) => rows[0]?.[f];

function gpuOf(index: number, row: Record<string, SmiField>): FitnessMeasurement['gpus'][number] {
  const name = row.name;
  const mem = row['memory.total'];
  const memoryMiB = mem === undefined || isMissing(mem) || !(Number(mem) > 0) ? null : Number(mem);
  const notGiven = [
    isMissing(name) ? `name ${name.missing}` : null,
    memoryMiB === null ? `memory.total ${mem === undefined ? '(absent)' : isMissing(mem) ? mem.missing : mem}` : null,
  ].filter((x): x is string => x !== null);
  return {
    index,
    name: name === undefined || isMissing(name) ? null : name,
    memoryMiB,
    ...(notGiven.length > 0 ? { notGiven: notGiven.join(', ') } : {}),
  };
}
