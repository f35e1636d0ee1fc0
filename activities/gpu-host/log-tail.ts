import { open, stat } from 'node:fs/promises';

// The daemon writes ANSI colour codes even when redirected; operators read plain text.
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Last `maxBytes` of a file as plain text; empty when the file does not exist. */
export async function readTail(file: string, maxBytes = 16_384): Promise<string> {
  try {
    const { size } = await stat(file);
    const start = Math.max(0, size - maxBytes);
    const fh = await open(file, 'r');
    try {
      const buf = Buffer.alloc(size - start);
      await fh.read(buf, 0, buf.length, start);
      return stripAnsi(buf.toString('utf8'));
    } finally {
      await fh.close();
    }
  } catch {
    return '';
  }
}
