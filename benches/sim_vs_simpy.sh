#!/usr/bin/env bash
# Runs tco-sim's engine and SimPy on the same case, in one go, and prints both rates and their
# ratio: an M/M/c queue with c = 128 servers, utilization 0.9, 10^6 requests (N overrides).
#
# SimPy is installed from PyPI into a venv under target/ (CI has only what scripts install).
# The Rust side is `cargo bench --bench sim_mmc` (release profile, one thread, best of 10), through
# both the general event engine and the fast FIFO recursion `sim::simulate` uses for this shape.
#
# Usage: benches/sim_vs_simpy.sh [N]
set -euo pipefail

n="${1:-1000000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/simpy-venv"

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import simpy" 2>/dev/null; then
    "$venv/bin/pip" install --quiet "simpy==4.1.2"
fi

echo "== tco-sim (M/M/128, rho 0.9, $n requests, 1 thread, best of 10)"
rust_out="$(cd "$root" && cargo bench --quiet --bench sim_mmc -- "$n" 10)"
echo "$rust_out" | grep -v '_req_per_s'
general_rate="$(echo "$rust_out" | awk '/^general_req_per_s/ {print $2}')"
fast_rate="$(echo "$rust_out" | awk '/^fast_req_per_s/ {print $2}')"

echo "== SimPy (same case, once)"
py_out="$("$venv/bin/python" "$root/benches/simpy_mmc.py" "$n" 1)"
echo "$py_out" | grep -v '^rate_req_per_s'
py_rate="$(echo "$py_out" | awk '/^rate_req_per_s/ {print $2}')"

awk -v g="$general_rate" -v f="$fast_rate" -v p="$py_rate" 'BEGIN {
    printf "SimPy:                   %10.0f req/s\n", p
    printf "tco-sim general engine:  %10.0f req/s   %5.0fx SimPy\n", g, g / p
    printf "tco-sim fast path:       %10.0f req/s   %5.0fx SimPy\n", f, f / p
}'
