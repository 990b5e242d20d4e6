#!/usr/bin/env bash
# Builds the gpuvp guest image: the kernel (fetch_kernel.sh: Debian's package, cached) and an
# initramfs with busybox-static, the init script, the guest tool (gpuvp-guest), the nvcc-built
# workloads, the unified-memory suite (uvm_suite) and every shared library they load (gpuvp's
# libcudart.so.13 from the build; the host's libstdc++, libc, ... and ld.so, as ldd lists them)
# and, in /lib/modules/vfio, the vfio modules of the same kernel package with their load order
# (init.sh loads them when the guest is booted with `gpuvp boot --interrupts msix`).
#
#   sw/guest/build_image.sh OUT_DIR BUILD_DIR
# writes OUT_DIR/vmlinux (a link to the cached kernel) and OUT_DIR/initramfs.cpio. Reproducible:
# files are added in sorted order with fixed timestamps and owners.
set -euo pipefail

out=${1:?usage: build_image.sh OUT_DIR BUILD_DIR}
build=${2:?usage: build_image.sh OUT_DIR BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)

busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ! file -L "$busybox" 2>/dev/null | grep -q 'statically linked'; then
  busybox=/bin/busybox
fi
if [ ! -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
  echo "build_image: error: a statically linked busybox is needed (apt-get install busybox-static)" >&2
  exit 1
fi
command -v cpio >/dev/null || { echo "build_image: error: cpio is needed (apt-get install cpio)" >&2; exit 1; }

guest_tool="$build/sw/guest/gpuvp-guest"
cudart_dir="$build/lib"
workload_dir="$build/sw/workloads/bin"
for need in "$guest_tool" "$cudart_dir/libcudart.so.13"; do
  [ -e "$need" ] || { echo "build_image: error: $need is missing (build gpuvp first)" >&2; exit 1; }
done

kernel=$("$here/fetch_kernel.sh")

mkdir -p "$out"
root=$(mktemp -d "$out/root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,root,etc,gpuvp/bin,gpuvp/lib,lib64,lib/modules,usr/bin,usr/sbin}
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
done
install -m 0755 "$here/init.sh" "$root/init"
modules="$(dirname "$kernel")/vfio"
[ -s "$modules/load-order" ] || { echo "build_image: error: $modules/load-order is missing (fetch_kernel.sh)" >&2; exit 1; }
cp -r "$modules" "$root/lib/modules/vfio"
install -m 0755 "$guest_tool" "$root/gpuvp/bin/gpuvp-guest"

programs=("$root/gpuvp/bin/gpuvp-guest")
if [ -d "$workload_dir" ]; then
  for w in $(ls "$workload_dir" | grep -E '^workload_[a-z0-9_]+$' | sort); do
    install -m 0755 "$workload_dir/$w" "$root/gpuvp/bin/$w"
    ln -s "$w" "$root/gpuvp/bin/${w#workload_}"
    programs+=("$root/gpuvp/bin/$w")
  done
fi
# The unified-memory suite (sw/workloads/uvm): `uvm_suite NAME` in the guest.
if [ -x "$workload_dir/uvm_suite" ]; then
  install -m 0755 "$workload_dir/uvm_suite" "$root/gpuvp/bin/uvm_suite"
  programs+=("$root/gpuvp/bin/uvm_suite")
fi
for extra in ${GPUVP_GUEST_EXTRA_PROGRAMS:-}; do
  install -m 0755 "$extra" "$root/gpuvp/bin/$(basename "$extra")"
  programs+=("$root/gpuvp/bin/$(basename "$extra")")
done

# Shared libraries: gpuvp's libcudart first, the rest wherever the host's loader finds them.
cp -L "$cudart_dir/libcudart.so.13" "$root/gpuvp/lib/libcudart.so.13"
libs=$(for p in "${programs[@]}" "$root/gpuvp/lib/libcudart.so.13"; do
         LD_LIBRARY_PATH="$cudart_dir" ldd "$p" 2>/dev/null | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}'
       done | sort -u)
for lib in $libs; do
  case "$(basename "$lib")" in
    libcudart.so*) continue ;;
  esac
  cp -L "$lib" "$root/gpuvp/lib/$(basename "$lib")"
done
loader=$(ldd "$guest_tool" | awk '/ld-linux/{print $1}' | head -n 1)
cp -L "$loader" "$root/lib64/$(basename "$loader")"

find "$root" -exec touch -h -d @0 {} +
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
   cpio -o -H newc -R 0:0 --reproducible --quiet) > "$out/initramfs.cpio.tmp"
mv "$out/initramfs.cpio.tmp" "$out/initramfs.cpio"
ln -sfn "$kernel" "$out/vmlinux"
echo "build_image: $out/initramfs.cpio ($(du -h "$out/initramfs.cpio" | cut -f1)), kernel $kernel" >&2
