import { stringify } from 'smol-toml';

/** What we set in cuzk-daemon's config file; the rest keeps the daemon's defaults. */
export interface DaemonConfigValues {
  listenAddress: string;
  paramCacheDir: string;
  partitionWorkers: number;
}

/**
 * cuzk-daemon's TOML config. Written by a TOML library so a path with a quote or a backslash stays
 * one string. Older daemons read partition_workers; newer ones size synthesis from the memory budget.
 */
export function renderDaemonConfig(v: DaemonConfigValues): string {
  return stringify({
    daemon: { listen: v.listenAddress },
    srs: { param_cache: v.paramCacheDir },
    synthesis: { partition_workers: v.partitionWorkers },
  });
}
