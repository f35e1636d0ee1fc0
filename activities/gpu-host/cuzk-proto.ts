import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const PROTO_PATH = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../proto/cuzk/v1/proving.proto',
);

/** The real daemon caps messages at 128 MiB each way; a PoRep C1 input alone is ~50 MB. */
export const MAX_MESSAGE_BYTES = 128 * 1024 * 1024;

/**
 * Loaded at run time from the .proto (no generated code to keep in step): uint64 as strings, enums as names.
 * Every result is parsed with zod where it enters our code (cuzk-client.ts).
 */
export function loadProvingEngine(): grpc.ServiceClientConstructor {
  const def = protoLoader.loadSync(PROTO_PATH, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    cuzk: { v1: { ProvingEngine: grpc.ServiceClientConstructor } };
  };
  return pkg.cuzk.v1.ProvingEngine;
}
