#!/usr/bin/env bash
# Makes a self-contained directory for running the parallel benchmark on another Linux machine
# with more cores and none of gpuvp's packages (a lent 16-core machine): a stripped gpuvp, our
# libcudart.so.13, the shared libraries they load (glibc excepted), the presets, and the
# benchmark programs built here with nvcc. On the other machine:
#
#   bench/parallel/bundle.sh build DIR                       (here)
#   THREADS="1 2 4 8 16" DIR/run.sh                          (there; run_bench.sh's variables)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: bundle.sh BUILD-DIR OUT-DIR}" && pwd)
out=${2:?usage: bundle.sh BUILD-DIR OUT-DIR}
nvcc=${GPUVP_NVCC:-/usr/local/cuda/bin/nvcc}
rm -rf "$out"
mkdir -p "$out/bin/lib" "$out/libs" "$out/programs"
strip -o "$out/bin/gpuvp" "$build/gpuvp"
strip -o "$out/bin/lib/libcudart.so.13" "$build/lib/libcudart.so.13"
cp -a "$here/../../configs" "$out/configs"
cp "$here/run_bench.sh" "$out/run_bench.sh"
"$nvcc" -cudart shared -o "$out/programs/vector_add" "$here/../timing/vector_add.cu"
"$nvcc" -cudart shared -o "$out/programs/matmul" "$here/../timing/matmul.cu"
cp "$build/sw/workloads/bin/workload_bfs" "$out/programs/"
# Every library the binaries load, except the C library and its loader (the other machine's).
for binary in "$out/bin/gpuvp" "$out/bin/lib/libcudart.so.13" "$out/programs/"*; do
  ldd "$binary" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libcudart.so.*) ;;
    *) cp -L "$lib" "$out/libs/" ;;
  esac
done
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$dir/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPUVP_CONFIG_DIR="$dir/configs"
missing=$(ldd "$dir/bin/gpuvp" | grep "not found" || true)
[ -z "$missing" ] || { echo "gpuvp cannot load: $missing"; exit 1; }
PROGRAMS="$dir/programs" exec "$dir/run_bench.sh" "$dir/bin"
RUN
chmod +x "$out/run.sh" "$out/run_bench.sh"
du -sh "$out"
