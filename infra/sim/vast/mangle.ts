import type http from 'node:http';

/** Where a simulated answer is written: the real response, or a capture that chaos can spoil first. */
export interface Sink {
  writeHead(status: number, headers?: http.OutgoingHttpHeaders): unknown;
  end(body?: string): unknown;
}

export class Captured implements Sink {
  status = 200;
  headers: http.OutgoingHttpHeaders = {};
  body = '';
  writeHead(status: number, headers: http.OutgoingHttpHeaders = {}): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  end(body = ''): this {
    this.body = body;
    return this;
  }
}

/** Ways a bad day spoils an answer Vast did produce: cut off mid-JSON, or with the wrong JSON types. */
export type Mangle = 'truncate' | 'wrongTypes';

export function mangleAnswer(body: string, how: Mangle): string {
  if (how === 'truncate') return body.slice(0, Math.max(1, Math.floor(body.length / 2)));
  try {
    return JSON.stringify(wrongTypes(JSON.parse(body)));
  } catch {
    return body;
  }
}

/** Numbers become strings and booleans numbers, all the way down. */
function wrongTypes(v: unknown): unknown {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (Array.isArray(v)) return v.map(wrongTypes);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, wrongTypes(x)]));
  }
  return v;
}

/** What a gateway in front of Vast answers when Vast is down or slow: an HTML page, not JSON. */
export function gatewayPage(status: 502 | 503 | 504): string {
  const title = { 502: 'Bad Gateway', 503: 'Service Temporarily Unavailable', 504: 'Gateway Time-out' }[status];
  return `<html>\r\n<head><title>${status} ${title}</title></head>\r\n<body>\r\n<center><h1>${status} ${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

/**
 * How Vast answers a key it does not accept, per endpoint (../shared/reference/vast-api.md §1.10): the
 * OpenAPI file for search lists 404 for an invalid key, and a revoked key was seen answered 404
 * auth_error on instance calls; the rest answer 401. The body is the same everywhere.
 */
export function badKeyStatus(method: string, path: string): 401 | 404 {
  if (method === 'POST' && path === '/api/v0/bundles/') return 404;
  if (/^\/api\/v0\/instances\/\d+\/$/.test(path)) return 404;
  return 401;
}
