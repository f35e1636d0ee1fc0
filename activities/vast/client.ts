import { z } from 'zod';
import {
  CreateResponseSchema,
  ErrorBodySchema,
  type Instance,
  ListInstancesResponseSchema,
  type Offer,
  type OfferQuery,
  OfferSearchResponseSchema,
  ShowInstanceResponseSchema,
} from './schemas.js';

/** A non-2xx answer (or a 200 with success:false) from the Vast API, with the parsed error body. */
export class VastHttpError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly bodyText: string,
    readonly errorCode: string | undefined,
    readonly newContract: number | undefined,
  ) {
    super(`${method} ${path} -> HTTP ${status}: ${bodyText.slice(0, 300)}`);
    this.name = 'VastHttpError';
  }
}

/** The network failed before an HTTP answer (refused, reset, timed out). */
export class VastNetworkError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    cause: unknown,
  ) {
    super(`${method} ${path} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'VastNetworkError';
  }
}

/** The answer was HTTP 2xx but its JSON did not have the documented shape. */
export class VastResponseShapeError extends Error {
  constructor(method: string, path: string, issues: string) {
    super(`${method} ${path}: unexpected response shape: ${issues}`);
    this.name = 'VastResponseShapeError';
  }
}

export interface VastClientOptions {
  baseUrl: string;
  apiKey: string;
  requestTimeoutMs?: number;
}

export interface CreateInstanceRequest {
  image: string;
  disk: number;
  label: string;
  env: Record<string, string>;
  onstart?: string;
}

/** Typed client for the renter side of the Vast.ai REST API (../shared/reference/vast-api.md). */
export class VastClient {
  private readonly baseUrl: string;

  constructor(private readonly opts: VastClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
  }

  async searchOffers(query: OfferQuery): Promise<Offer[]> {
    const res = await this.request('POST', '/api/v0/bundles/', query, OfferSearchResponseSchema);
    return res.offers;
  }

  /** PUT /asks/{id}/ ; an error body that still names a new_contract is surfaced so the caller destroys it. */
  async createInstance(offerId: number, req: CreateInstanceRequest): Promise<number> {
    const body = { client_id: 'me', price: null, runtype: 'args', cancel_unavail: true, force: false, ...req };
    const res = await this.request('PUT', `/api/v0/asks/${offerId}/`, body, CreateResponseSchema);
    if (!res.success || res.new_contract === undefined) {
      throw new VastHttpError('PUT', `/api/v0/asks/${offerId}/`, 200, JSON.stringify(res), res.error, res.new_contract);
    }
    return res.new_contract;
  }

  async showInstance(instanceId: number): Promise<Instance | null> {
    const res = await this.request(
      'GET',
      `/api/v0/instances/${instanceId}/?owner=me`,
      undefined,
      ShowInstanceResponseSchema,
    );
    return res.instances;
  }

  /** Walks the v1 list's keyset pages (25 per page at most). */
  async listInstances(filters: Record<string, unknown> = {}): Promise<Instance[]> {
    const all: Instance[] = [];
    let token: string | null | undefined;
    do {
      const params = new URLSearchParams({ select_filters: JSON.stringify(filters), limit: '25' });
      if (token) params.set('after_token', token);
      const res = await this.request(
        'GET',
        `/api/v1/instances/?${params.toString()}`,
        undefined,
        ListInstancesResponseSchema,
      );
      all.push(...res.instances);
      token = res.next_token;
    } while (token);
    return all;
  }

  async destroyInstance(instanceId: number): Promise<void> {
    await this.request('DELETE', `/api/v0/instances/${instanceId}/`, {}, z.unknown());
  }

  private async request<S extends z.ZodType>(
    method: string,
    path: string,
    body: unknown,
    schema: S,
  ): Promise<z.infer<S>> {
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, {
        method,
        headers: {
          Authorization: `Bearer ${this.opts.apiKey}`,
          'Content-Type': 'application/json',
          'User-Agent': 'gpu-fleet/0.1',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.requestTimeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new VastNetworkError(method, path, err);
    }
    const text = await response.text();
    if (!response.ok) {
      const parsed = ErrorBodySchema.safeParse(safeJson(text));
      const errorBody = parsed.success ? parsed.data : undefined;
      throw new VastHttpError(method, path, response.status, text, errorBody?.error, errorBody?.new_contract);
    }
    const result = schema.safeParse(safeJson(text));
    if (!result.success) {
      const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new VastResponseShapeError(method, path, issues);
    }
    return result.data;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
