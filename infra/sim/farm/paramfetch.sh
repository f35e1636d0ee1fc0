#!/bin/sh
# Simulated parameter fetch for host-farm machines: the same output, timing and faults as
# ../paramfetch.ts, without starting a Node process per host.
# usage: paramfetch.sh <cache dir> <seconds> <ok|stall|fail>
set -eu
cache=$1
step=$(awk -v s="$2" 'BEGIN { printf "%.3f", s / 10 }')
fault=$3
params=v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2
mkdir -p "$cache"
i=1
while [ "$i" -le 10 ]; do
  sleep "$step"
  echo "fetching $params.params: $((i * 4506)) MiB of 45056 MiB"
  # A hung download stays alive and silent.
  if [ "$i" -eq 3 ] && [ "$fault" = stall ]; then exec sleep 2147483647; fi
  if [ "$i" -eq 4 ] && [ "$fault" = fail ]; then
    echo 'ERROR: fetching params: unexpected EOF (checksum mismatch on .params)' >&2
    exit 1
  fi
  i=$((i + 1))
done
echo simulated > "$cache/$params.params"
echo simulated > "$cache/$params.vk"
echo 'parameters fetched'
