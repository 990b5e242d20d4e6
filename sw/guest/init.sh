#!/bin/sh
# gpuvp guest init (PID 1): mounts the pseudo file systems, checks that the driver reaches the
# platform (GPUVP-READY), runs the programs `gpuvp boot --guest-run` passed on the kernel command
# line (gpuvp.run=<base64 of one command per line>), reports each one's exit code, and powers off
# (or leaves a shell with gpuvp.interactive=1). Lines starting with "GPUVP-" are read by
# `gpuvp boot` on the serial console.
# With gpuvp.interrupts=msix (`gpuvp boot --interrupts msix`: q35, intel-iommu, intel_iommu=on)
# it loads the vfio modules (/lib/modules/vfio, in load-order) and binds the ivshmem device to
# vfio-pci, so that the driver takes completions by MSI-X (sw/driver/guest_transport.h).
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /tmp
export PATH=/gpuvp/bin:/bin:/sbin:/usr/bin:/usr/sbin
export LD_LIBRARY_PATH=/gpuvp/lib
export GPUVP_SOCKET=pci
export HOME=/root

run=""
interactive=0
interrupts=poll
for word in $(cat /proc/cmdline); do
  case "$word" in
    gpuvp.run=*) run="${word#gpuvp.run=}" ;;
    gpuvp.interactive=1) interactive=1 ;;
    gpuvp.interrupts=*) interrupts="${word#gpuvp.interrupts=}" ;;
  esac
done

finish() {
  if [ "$interactive" = 1 ]; then
    echo "GPUVP-SHELL (exit or poweroff to stop the guest)"
    setsid cttyhack sh
  fi
  echo "GPUVP-POWEROFF"
  sync
  reboot -f
}

# vfio-pci for the ivshmem device (1af4:1110): its modules in dependency order, then the device
# bound through driver_override. Prints why when it cannot.
bind_vfio() {
  if [ ! -s /lib/modules/vfio/load-order ]; then
    echo "gpuvp-init: this image has no vfio modules (/lib/modules/vfio); rebuild it (sw/guest/build_image.sh)"
    return 1
  fi
  for module in $(cat /lib/modules/vfio/load-order); do
    insmod "/lib/modules/vfio/$module" || { echo "gpuvp-init: insmod $module failed"; return 1; }
  done
  for dir in /sys/bus/pci/devices/*; do
    [ "$(cat "$dir/vendor")" = 0x1af4 ] && [ "$(cat "$dir/device")" = 0x1110 ] || continue
    address=${dir##*/}
    if [ ! -e "$dir/iommu_group" ]; then
      echo "gpuvp-init: $address has no IOMMU group (needs -device intel-iommu and intel_iommu=on)"
      return 1
    fi
    [ -e "$dir/driver" ] && echo "$address" > "$dir/driver/unbind"
    echo vfio-pci > "$dir/driver_override"
    echo "$address" > /sys/bus/pci/drivers_probe
    driver=$(readlink "$dir/driver")
    if [ "${driver##*/}" != vfio-pci ]; then
      echo "gpuvp-init: $address did not bind to vfio-pci"
      return 1
    fi
    return 0
  done
  echo "gpuvp-init: no ivshmem device (1af4:1110)"
  return 1
}

if [ "$interrupts" = msix ] && ! bind_vfio; then
  echo "GPUVP-FAILED vfio"
  finish
fi

if ! gpuvp-guest probe; then
  echo "GPUVP-FAILED driver"
  finish
fi

if [ -n "$run" ]; then
  echo "$run" | base64 -d > /tmp/run.list 2>/dev/null
  index=0
  while IFS= read -r command <&3; do
    [ -z "$command" ] && continue
    echo "GPUVP-BEGIN $index $command"
    # A workload's name wins over a shell builtin of the same name (printf): run it by path.
    first=${command%%[ 	]*}
    if [ -x "/gpuvp/bin/workload_$first" ]; then
      command="/gpuvp/bin/workload_$first${command#"$first"}"
    fi
    sh -c "$command"
    code=$?
    gpuvp-guest reclaim
    echo "GPUVP-END $index $code"
    index=$((index + 1))
  done 3< /tmp/run.list
fi
echo "GPUVP-DONE"
finish
