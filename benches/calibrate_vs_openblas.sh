#!/usr/bin/env bash
# `tco-sim calibrate` against the yardsticks, in one go on the same machine:
#   - SGEMM: numpy float32 matmul (OpenBLAS, from PyPI into a venv under target/) at n = 2048,
#     on one thread and on all (OPENBLAS_NUM_THREADS), against calibrate's sgemm 2048^3;
#   - triad: a C STREAM triad (benches/calibrate_stream.c, gcc -O3 -march=native, OpenMP) on
#     one thread and on all, over arrays of the same size calibrate uses (4 x the LLC);
# and prints each pair with its ratio. Targets: SGEMM >= 0.90 of OpenBLAS, triad >= 0.90 of C.
#
# Usage: benches/calibrate_vs_openblas.sh [extra calibrate options, e.g. --duration 60]
# Needs: cargo, python3 with venv (pip reaches PyPI), gcc with OpenMP. Medians throughout;
# on a shared machine rerun and compare the spreads calibrate prints.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/bench
mkdir -p "$out"
threads=$(nproc)

echo "== building (release)"
cargo bench --bench calibrate --no-run >/dev/null 2>&1 || cargo bench --bench calibrate --no-run
if [ ! -x "$out/venv/bin/python" ]; then
  python3 -m venv "$out/venv"
fi
"$out/venv/bin/python" -c 'import numpy' 2>/dev/null || "$out/venv/bin/pip" install -q numpy
gcc -O3 -march=native -fopenmp benches/calibrate_stream.c -o "$out/calibrate_stream"

echo "== tco-sim calibrate (the price is a placeholder: this compares speed only)"
cargo bench --bench calibrate -- --out "$out/bench-local.toml" --usd-per-hour 1 "$@"

echo "== numpy / OpenBLAS sgemm, n = 2048"
cat >"$out/np_sgemm.py" <<'PY'
import os, statistics, time
import numpy as np
n = 2048
rng = np.random.default_rng(1)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
a @ b  # warm-up
rates = []
for _ in range(10):
    t = time.perf_counter()
    a @ b
    rates.append(2 * n**3 / (time.perf_counter() - t) / 1e9)
print(f"{statistics.median(rates):.2f} {max(rates):.2f} {min(rates):.2f}")
PY
np1=$(OPENBLAS_NUM_THREADS=1 "$out/venv/bin/python" "$out/np_sgemm.py")
npall=$(OPENBLAS_NUM_THREADS=$threads "$out/venv/bin/python" "$out/np_sgemm.py")
echo "OpenBLAS 1 thread:  median/max/min GFLOP/s $np1"
echo "OpenBLAS $threads threads: median/max/min GFLOP/s $npall"

echo "== C STREAM triad"
elems=$("$out/venv/bin/python" - "$out/bench-local.toml" <<'PY'
import re, sys, tomllib
p = tomllib.load(open(sys.argv[1], "rb"))
method = p["calibration"]["method"]
mib = int(re.search(r"STREAM (\d+) MiB per array", method).group(1))
print(mib * 1024 * 1024 // 4)
PY
)
c1=$(OMP_NUM_THREADS=1 OMP_PROC_BIND=close OMP_PLACES=cores "$out/calibrate_stream" "$elems" 10)
call=$(OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores "$out/calibrate_stream" "$elems" 10)
echo "C triad 1 thread:  $c1"
echo "C triad $threads threads: $call"

echo "== pairs (medians; ratio = tco-sim / yardstick)"
"$out/venv/bin/python" - "$out/bench-local.toml" "$np1" "$npall" "$c1" "$call" "$threads" <<'PY'
import sys, tomllib
p = tomllib.load(open(sys.argv[1], "rb"))
m = p["calibration"]["measured"]
np1, npall = (float(x.split()[0]) for x in sys.argv[2:4])
def med(s):
    return float(s.split("median_gbps=")[1])
c1, call = med(sys.argv[4]), med(sys.argv[5])
threads = sys.argv[6]
rows = [
    ("sgemm 2048^3, 1 core", m["sgemm_2048x2048x2048_1core_gflops"], np1, "GFLOP/s", "OpenBLAS"),
    (f"sgemm 2048^3, {threads} cores", m["sgemm_2048x2048x2048_allcore_gflops"], npall, "GFLOP/s", "OpenBLAS"),
]
triad = [k for k in m if k.startswith("triad") and k.endswith("_1core_gbps")][0]
rows += [
    ("triad, 1 core", m[triad], c1, "GB/s", "C STREAM"),
    (f"triad, {threads} cores", m[triad.replace("_1core_", "_allcore_")], call, "GB/s", "C STREAM"),
]
for name, ours, theirs, unit, who in rows:
    ratio = ours / theirs
    flag = "ok" if ratio >= 0.9 else "BELOW 0.90"
    print(f"{name:<22} tco-sim {ours:8.1f}  {who:<9} {theirs:8.1f} {unit:<8} ratio {ratio:5.2f}  {flag}")
fma = [k for k in m if k.startswith("fma_ceiling") and k.endswith("_1core_gflops")]
if fma:
    print(f"fma ceiling, 1 core    tco-sim {m[fma[0]]:8.1f} GFLOP/s")
i8 = [k for k in m if k.startswith("int8_gemm") and k.endswith("_1core_gops")]
for k in i8:
    print(f"{k:<22} {m[k]:8.1f} GOP/s, all cores {m[k.replace('_1core_', '_allcore_')]:.1f}")
PY
