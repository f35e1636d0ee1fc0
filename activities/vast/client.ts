import { z } from 'zod';
import {
  ChangeBidResponseSchema,
  CreateResponseSchema,
  OfferSchema,
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
    /** Vast's own words (`msg`, `message` or `detail`), shown to the operator as Vast wrote them. */
    readonly vastMessage?: string,
  ) {
    super(
      `${method} ${path} -> HTTP ${status}` +
        (errorCode || vastMessage
          ? `: ${[errorCode, vastMessage].filter(Boolean).join(': ')}`
          : `: ${bodyText.slice(0, 300)}`),
    );
    this.name = 'VastHttpError';
  }

  /** Vast answers some bad keys with 404 (and others with 401/403): the error field tells, not the status. */
  get isAuth(): boolean {
    return this.status === 401 || this.status === 403 || this.errorCode === 'auth_error';
  }

  /** The instance is gone: 404 `no_such_instance` (DELETE) or `not_found` (OpenAPI), but never an auth error. */
  get isInstanceGone(): boolean {
    return (
      !this.isAuth &&
      (this.errorCode === 'no_such_instance' ||
        (this.status === 404 && (this.errorCode === undefined || this.errorCode === 'not_found')))
    );
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
  /**
   * Bid in $/h for an interruptible instance (Vast's `price`); absent for on-demand. With a bid,
   * `cancel_unavail` is false, the docs' default for interruptibles: a bid under min_bid makes a
   * stopped instance and an error naming it (dstack's api_client.py), which the caller destroys.
   */
  price?: number;
}

/** Typed client for the renter side of the Vast.ai REST API (../shared/reference/vast-api.md). */
export class VastClient {
  private readonly baseUrl: string;

  constructor(private readonly opts: VastClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
  }

  async searchOffers(query: OfferQuery): Promise<Offer[]> {
    return (await this.searchOffersReport(query)).offers;
  }

  /**
   * Search, reading the page row by row: a row that lacks what we need (a null price, no machine id) is
   * dropped and counted with the first reason, so one odd row never sinks the whole search.
   */
  async searchOffersReport(query: OfferQuery): Promise<OfferSearchReport> {
    const res = await this.request('POST', '/api/v0/bundles/', query, OfferSearchResponseSchema);
    const offers: Offer[] = [];
    let count = 0;
    let firstReason: string | null = null;
    res.offers.forEach((row, i) => {
      const parsed = OfferSchema.safeParse(row);
      if (parsed.success) return void offers.push(parsed.data);
      count++;
      firstReason ??= `row ${i}${rowId(row)}: ${issuesText(parsed.error.issues)}`;
    });
    // Not one usable row in a non-empty page is a garbled answer (wrong types throughout), not a market.
    if (offers.length === 0 && count > 0) {
      throw new VastResponseShapeError('POST', '/api/v0/bundles/', `no usable offer row; first: ${firstReason}`);
    }
    return { offers, dropped: { count, firstReason } };
  }

  /** PUT /asks/{id}/ ; an error body that still names a new_contract is surfaced so the caller destroys it. */
  async createInstance(offerId: number, req: CreateInstanceRequest): Promise<number> {
    const { price, ...rest } = req;
    const body = {
      client_id: 'me',
      price: price ?? null,
      runtype: 'args',
      cancel_unavail: price === undefined,
      force: false,
      ...rest,
    };
    const res = await this.request('PUT', `/api/v0/asks/${offerId}/`, body, CreateResponseSchema);
    if (!res.success || res.new_contract === undefined) {
      throw new VastHttpError(
        'PUT',
        `/api/v0/asks/${offerId}/`,
        200,
        JSON.stringify(res),
        res.error,
        res.new_contract,
        res.msg,
      );
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

  /** PUT /instances/bid_price/{id}/ : the new bid ($/h) for an interruptible instance. */
  async changeBid(instanceId: number, priceDph: number): Promise<void> {
    await this.request(
      'PUT',
      `/api/v0/instances/bid_price/${instanceId}/`,
      { client_id: 'me', price: priceDph },
      ChangeBidResponseSchema,
    );
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
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      // The answer was cut off mid-body (connection reset, timeout while reading).
      throw new VastNetworkError(method, path, err);
    }
    const json = safeJson(text);
    const parsedError = ErrorBodySchema.safeParse(json);
    const errorBody = parsedError.success ? parsedError.data : undefined;
    // Vast answers some refusals (insufficient credit, a bad bid) with HTTP 200 and success:false.
    if (!response.ok || errorBody?.success === false) {
      throw new VastHttpError(
        method,
        path,
        response.status,
        text,
        errorBody?.error,
        errorBody?.new_contract,
        errorBody?.msg ?? errorBody?.message ?? errorBody?.detail,
      );
    }
    const result = schema.safeParse(json);
    if (!result.success) {
      const issues =
        typeof json === 'string' ? `not JSON (${JSON.stringify(text.slice(0, 80))})` : issuesText(result.error.issues);
      throw new VastResponseShapeError(method, path, issues);
    }
    return result.data;
  }
}

export interface OfferSearchReport {
  offers: Offer[];
  /** Rows left out because they lack what the product needs; the first reason names the field. */
  dropped: { count: number; firstReason: string | null };
}

function issuesText(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ');
}

function rowId(row: unknown): string {
  const id = row !== null && typeof row === 'object' ? (row as { id?: unknown }).id : undefined;
  return typeof id === 'number' ? ` (offer ${id})` : '';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
