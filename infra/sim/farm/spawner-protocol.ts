import { constants } from 'node:os';
import { z } from 'zod';

/** Messages between the host farm and its spawner process (Node IPC; see spawner.ts). */

const Signal = z.custom<NodeJS.Signals>((s) => typeof s === 'string' && s in constants.signals, 'a signal name');
const Id = z.number().int().nonnegative();

export const SpawnerRequestSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('spawn'),
    id: Id,
    cmd: z.string().min(1),
    args: z.array(z.string()),
    env: z.record(z.string(), z.string()).optional(),
  }),
  z.object({ t: z.literal('kill'), id: Id, signal: Signal }),
]);
export type SpawnerRequest = z.infer<typeof SpawnerRequestSchema>;

export const SpawnerEventSchema = z.discriminatedUnion('t', [
  /** The spawner listens; requests sent before this could be lost. */
  z.object({ t: z.literal('ready') }),
  /** Output, base64 (a process may write any bytes). */
  z.object({ t: z.literal('data'), id: Id, fd: z.union([z.literal(1), z.literal(2)]), data: z.string() }),
  z.object({ t: z.literal('error'), id: Id, message: z.string(), code: z.string().optional() }),
  z.object({ t: z.literal('exit'), id: Id, code: z.number().int().nullable(), signal: Signal.nullable() }),
  z.object({ t: z.literal('close'), id: Id }),
]);
export type SpawnerEvent = z.infer<typeof SpawnerEventSchema>;
/** The events about one process. */
export type ProcessEvent = Exclude<SpawnerEvent, { t: 'ready' }>;
