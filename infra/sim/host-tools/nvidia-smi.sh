#!/bin/bash
# Stands in for nvidia-smi on a simulated host: the GPUs its scenario says the machine really has
# (which may not be what the offer claims), and the failures a real driver shows.
# usage: nvidia-smi.sh <gpus> <name> <vram MiB> <ok|broken|mismatch> <cuda version> [nvidia-smi args...]
set -u
gpus=$1 name=$2 vram=$3 driver=$4 cuda=$5
shift 5
case "$driver" in
  broken)
    # What nvidia-smi prints when the kernel module is not loaded or the device nodes are missing.
    echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."
    exit 9
    ;;
  mismatch)
    # A driver upgraded under a running container: the user-space library no longer matches the module.
    echo "Failed to initialize NVML: Driver/library version mismatch"
    echo "NVML library version: 550.127"
    exit 18
    ;;
esac
if [ "${1:-}" = "" ]; then
  echo "+-----------------------------------------------------------------------------------------+"
  echo "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: $cuda     |"
  echo "|-----------------------------------------+------------------------+----------------------+"
  exit 0
fi
for ((i = 0; i < gpus; i++)); do
  printf '%d, %s, %d, GPU-00000000-0000-0000-0000-%012d\n' "$i" "$name" "$vram" "$i"
done
