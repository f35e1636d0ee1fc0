/** gRPC status codes by name (grpc/doc/statuscodes.md); workflows cannot import @grpc/grpc-js. */
const NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/** "UNAVAILABLE (14)"; an unknown number stays a number. */
export function grpcCodeName(code: number): string {
  const name = NAMES[code];
  return name ? `${name} (${code})` : `gRPC code ${code}`;
}
