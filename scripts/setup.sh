#!/usr/bin/env bash
# Installs what gpuvp needs from Debian's packages (only what is missing) and checks for nvcc.
# Idempotent: a second run installs nothing and takes well under a second.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libsystemc-dev                 # SystemC 2.3.4 with TLM-2.0
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libboost-dev
  libyaml-cpp-dev                # configuration files (YAML with line/column marks)
  nlohmann-json3-dev             # statistics and trace JSON
  libcli11-dev                   # the gpuvp command line
  libspdlog-dev libfmt-dev       # logging
  libzstd-dev                    # nvcc 13 compresses PTX in fatbins with zstd
  clang libclang-rt-14-dev       # libFuzzer for the PTX parser fuzz target
  qemu-system-x86 busybox-static cpio xz-utils  # `gpuvp boot`: the QEMU guest and its initramfs
  linux-libc-dev                 # <linux/vfio.h>: the guest transport's MSI-X path
  python3-matplotlib             # `gpuvp report` (inline SVG charts) and `gpuvp plot` (sweep charts, PNG/SVG)
  graphviz                       # `gpuvp topology`: the platform diagram (dot)
  chromium                       # tests render `gpuvp report` pages in headless Chromium
  libopenmpi-dev openmpi-bin     # `mpirun -np K gpuvp sweep --mpi SPEC`
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

NVCC=${GPUVP_NVCC:-/usr/local/cuda/bin/nvcc}
if [ ! -x "$NVCC" ]; then
  echo "setup: error: nvcc not found at $NVCC (gpuvp builds its CUDA workloads with it;" \
       "set GPUVP_NVCC to its path)" >&2
  exit 1
fi

# The guest's kernel for `gpuvp boot`: Debian's package, downloaded (not installed) into
# ~/.cache/gpuvp/guest once and unpacked there; later runs find it cached (no network).
"$(dirname "$0")/../sw/guest/fetch_kernel.sh" >/dev/null
