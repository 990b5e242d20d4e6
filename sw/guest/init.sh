#!/bin/sh
# gpuvp guest init (PID 1): mounts the pseudo file systems, checks that the driver reaches the
# platform (GPUVP-READY), runs the programs `gpuvp boot --guest-run` passed on the kernel command
# line (gpuvp.run=<base64 of one command per line>), reports each one's exit code, and powers off
# (or leaves a shell with gpuvp.interactive=1). Lines starting with "GPUVP-" are read by
# `gpuvp boot` on the serial console.
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
for word in $(cat /proc/cmdline); do
  case "$word" in
    gpuvp.run=*) run="${word#gpuvp.run=}" ;;
    gpuvp.interactive=1) interactive=1 ;;
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
