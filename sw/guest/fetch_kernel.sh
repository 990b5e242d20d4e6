#!/usr/bin/env bash
# Fetches the guest kernel: Debian's linux-image package, downloaded with `apt-get download`
# (never installed on the host) into the cache, unpacked with `dpkg -x`, and its vmlinuz's xz
# payload extracted into an uncompressed vmlinux (QEMU boots that through the PVH entry in ~2 s
# instead of ~5 s for the bzImage). From the same package it keeps the modules that vfio-pci
# needs (`gpuvp boot --interrupts msix`) with their dependencies, in kernel-<ver>/vfio/, plus
# kernel-<ver>/vfio/load-order: their file names in dependency order (from each module's
# .modinfo `depends=`; the package carries no modules.dep). Idempotent: a second run only
# prints the path.
#
#   sw/guest/fetch_kernel.sh            -> prints the path of the cached vmlinux
# Environment: GPUVP_GUEST_CACHE (default ~/.cache/gpuvp/guest), GPUVP_GUEST_KERNEL (package
# version, e.g. 6.1.0-56; default: what Debian's linux-image-amd64 depends on, else the newest
# cached package).
set -euo pipefail

cache=${GPUVP_GUEST_CACHE:-${HOME}/.cache/gpuvp/guest}
mkdir -p "$cache"

version=${GPUVP_GUEST_KERNEL:-}
if [ -z "$version" ]; then
  # Offline first: the newest package already in the cache.
  cached=$(ls "$cache"/linux-image-*-amd64_*_amd64.deb 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$cached" ]; then
    version=$(basename "$cached" | sed -E 's/^linux-image-(.*)-amd64_.*$/\1/')
  else
    depends() {
      apt-cache depends linux-image-amd64 2>/dev/null |
        sed -nE 's/^ *Depends: linux-image-(.*)-amd64$/\1/p' | head -n 1
    }
    version=$(depends)
    if [ -z "$version" ]; then
      # A machine whose package lists were never fetched: fetch them once.
      SUDO=""
      if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
      $SUDO apt-get update -qq >&2 || true
      version=$(depends)
    fi
  fi
fi
if [ -z "$version" ]; then
  echo "fetch_kernel: error: cannot tell which Debian kernel to use (set GPUVP_GUEST_KERNEL, e.g. 6.1.0-56)" >&2
  exit 1
fi

vmlinux="$cache/kernel-$version/vmlinux"
modules="$cache/kernel-$version/vfio"
if [ -s "$vmlinux" ] && [ -s "$modules/load-order" ]; then
  echo "$vmlinux"
  exit 0
fi

deb=$(ls "$cache"/linux-image-"$version"-amd64_*_amd64.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
  echo "fetch_kernel: downloading linux-image-$version-amd64 into $cache" >&2
  (cd "$cache" && apt-get download -q "linux-image-$version-amd64" >&2) || {
    echo "fetch_kernel: error: apt-get download linux-image-$version-amd64 failed" >&2
    exit 1
  }
  deb=$(ls "$cache"/linux-image-"$version"-amd64_*_amd64.deb | head -n 1)
fi

work=$(mktemp -d "$cache/unpack.XXXXXX")
trap 'rm -rf "$work"' EXIT
dpkg -x "$deb" "$work"
mkdir -p "$cache/kernel-$version"

if [ ! -s "$vmlinux" ]; then
  vmlinuz=$(ls "$work"/boot/vmlinuz-* | head -n 1)
  # The bzImage carries the kernel as an xz stream: find its magic (FD 37 7A 58 5A 00) and
  # decompress from there (xz stops at the end of the stream; trailing bytes are ignored).
  offset=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n 1 | cut -d: -f1)
  if [ -z "$offset" ]; then
    echo "fetch_kernel: error: no xz payload in $vmlinuz" >&2
    exit 1
  fi
  tail -c +$((offset + 1)) "$vmlinuz" | xz -dc --single-stream > "$vmlinux.tmp" 2>/dev/null || true
  if ! head -c 4 "$vmlinux.tmp" | grep -q 'ELF'; then
    rm -f "$vmlinux.tmp"
    echo "fetch_kernel: error: the xz payload of $vmlinuz is not an ELF kernel" >&2
    exit 1
  fi
  mv "$vmlinux.tmp" "$vmlinux"
fi

# vfio-pci and the type1 IOMMU backend, with what they depend on, in load order.
tree=$(ls -d "$work"/lib/modules/*/kernel | head -n 1)
declare -A path_of=()
while IFS= read -r ko; do
  name=$(basename "$ko" .ko)
  path_of[${name//-/_}]=$ko
done < <(find "$tree" -name '*.ko' | LC_ALL=C sort)
depends_of() {  # the module's .modinfo "depends=a,b" (NUL-separated strings in the file)
  tr '\0' '\n' < "${path_of[$1]}" | sed -n 's/^depends=//p' | head -n 1 | tr ',-' ' _'
}
order=()
declare -A placed=()
place() {  # depth first: dependencies before the module
  local name=$1
  [ -n "${placed[$name]:-}" ] && return 0
  if [ -z "${path_of[$name]:-}" ]; then
    echo "fetch_kernel: error: module $name is not in $(basename "$deb")" >&2
    exit 1
  fi
  placed[$name]=1
  local dep
  for dep in $(depends_of "$name"); do place "$dep"; done
  order+=("$name")
}
place vfio_iommu_type1
place vfio_pci
rm -rf "$modules.tmp"
mkdir -p "$modules.tmp"
for name in "${order[@]}"; do
  cp "${path_of[$name]}" "$modules.tmp/$name.ko"
  echo "$name.ko" >> "$modules.tmp/load-order"
done
rm -rf "$modules"
mv "$modules.tmp" "$modules"
echo "fetch_kernel: vfio modules for --interrupts msix: ${order[*]}" >&2
echo "$vmlinux"
