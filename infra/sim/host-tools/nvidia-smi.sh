#!/bin/bash
# Stands in for nvidia-smi on a simulated host: the GPUs its scenario says the machine really has
# (which may not be what the offer claims), in the forms real drivers print, and their failures
# (test/fixtures/nvidia-smi names the source of each form).
# usage: nvidia-smi.sh <gpus> <name> <vram MiB|N/A> <driver state> <cuda version|N/A> <driver version> [nvidia-smi args...]
#   driver state: ok | broken | mismatch | no-devices | gpu-lost | garbled
#   driver version: 610 and later print the KMD banner ("KMD Version", "CUDA UMD Version") and know kmd_version.
set -u
gpus=$1 name=$2 vram=$3 driver=$4 cuda=$5 version=$6
shift 6
case "$driver" in
  broken)
    # The kernel module is not loaded or the device nodes are missing (nvidia-smi(1): exit 9).
    echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."
    exit 9
    ;;
  mismatch)
    # A driver upgraded under a running container: the user-space library no longer matches the module.
    echo "Failed to initialize NVML: Driver/library version mismatch"
    echo "NVML library version: 550.127"
    exit 18
    ;;
  no-devices)
    echo "No devices were found"
    exit 6
    ;;
  gpu-lost)
    # nvidia-smi(1): exit 15, the GPU has fallen off the bus.
    echo "Unable to determine the device handle for GPU0000:41:00.0: GPU is lost.  Reboot the system to recover this GPU"
    exit 15
    ;;
  garbled)
    # Not nvidia-smi's output at all (a wrapper): what the gate cannot read.
    echo "GPU monitoring is provided by the host agent; see /opt/agent/gpu.json"
    exit 0
    ;;
esac
major=${version%%.*}
if [ "${1:-}" = "" ]; then
  top="+-----------------------------------------------------------------------------------------+"
  echo "$(date '+%a %b %e %H:%M:%S %Y')       "
  echo "$top"
  if [ "$major" -ge 610 ]; then
    printf '| NVIDIA-SMI %-22s KMD Version: %-14s CUDA UMD Version: %-8s|\n' "$version" "$version" "$cuda"
  else
    printf '| NVIDIA-SMI %-22s Driver Version: %-14s CUDA Version: %-8s|\n' "$version" "$version" "$cuda"
  fi
  echo "+-----------------------------------------+------------------------+----------------------+"
  exit 0
fi
fields=""
for arg in "$@"; do
  case "$arg" in --query-gpu=*) fields=${arg#--query-gpu=} ;; esac
done
IFS=',' read -r -a asked <<<"$fields"
for f in "${asked[@]}"; do
  if [ "$f" = kmd_version ] && [ "$major" -lt 610 ]; then
    echo "Field \"kmd_version\" is not a valid field to query."
    exit 2
  fi
done
[ "$vram" = N/A ] && vram='[N/A]'
for ((i = 0; i < gpus; i++)); do
  row=""
  for f in "${asked[@]}"; do
    case "$f" in
      index) v=$i ;;
      name) v=$name ;;
      memory.total) v=$vram ;;
      uuid) v=$(printf 'GPU-00000000-0000-0000-0000-%012d' "$i") ;;
      driver_version | kmd_version) v=$version ;;
      *) v='[N/A]' ;;
    esac
    row="${row:+$row, }$v"
  done
  echo "$row"
done
