import { DEFAULT_OFFER_FILTER, type OfferFilter } from '../../workflows/domain/policy/offer-filter.js';
import { MARKET_PARAMS } from './market-params.js';

/**
 * The production search over the market's models. Its hosts all pass the default RAM and reliability
 * bars (128 GB and up, reliability 0.95: market.ts), but a 4-GPU host lists at up to ~$2.9/h (4 × A40 at
 * the top of the price spread), so the price cap is raised for both policies to meet the whole market.
 */
export const MARKET_FILTER: OfferFilter = {
  ...DEFAULT_OFFER_FILTER,
  gpuModels: Object.keys(MARKET_PARAMS.gpuModels),
  maxOfferDph: 3,
};
