/**
 * Every string and decoded payload byte in a history, so a secret cannot hide inside base64 payloads.
 * `skipKeys` leaves out fields by name (e.g. searchAttributes, which Temporal keeps in plaintext for
 * visibility by design, encrypted or not).
 */
export function historyText(value: unknown, skipKeys: readonly string[] = [], out: string[] = []): string {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => historyText(v, skipKeys, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (!skipKeys.includes(k)) historyText(v, skipKeys, out);
  }
  return out.join('\n');
}
