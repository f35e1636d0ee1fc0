/** Every string and decoded payload byte in a history, so a secret cannot hide inside base64 payloads. */
export function historyText(value: unknown, out: string[] = []): string {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => historyText(v, out));
  else if (value !== null && typeof value === 'object') Object.values(value).forEach((v) => historyText(v, out));
  return out.join('\n');
}
