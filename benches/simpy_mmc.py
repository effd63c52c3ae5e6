"""SimPy side of benches/sim_vs_simpy.sh: the same M/M/c queue as benches/sim_mmc.rs.

c = 128 servers behind one FIFO queue (simpy.Resource), exponential service with mean 1 ms,
Poisson arrivals at utilization 0.9, N requests, each latency recorded. Prints the p99 as a
sanity check against the Rust run and `rate_req_per_s R` (simulated requests per wall second).

Usage: python simpy_mmc.py [N] [SEED]
"""

import random
import sys
import time

import simpy

C = 128
MEAN_S = 0.001
RHO = 0.9


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = random.Random(seed)
    rate = RHO * C / MEAN_S
    env = simpy.Environment()
    servers = simpy.Resource(env, capacity=C)
    latencies = []

    def request(arrival):
        with servers.request() as slot:
            yield slot
            yield env.timeout(rng.expovariate(1.0 / MEAN_S))
        latencies.append(env.now - arrival)

    def arrivals():
        for _ in range(n):
            yield env.timeout(rng.expovariate(rate))
            env.process(request(env.now))

    env.process(arrivals())
    t0 = time.perf_counter()
    env.run()
    secs = time.perf_counter() - t0
    latencies.sort()
    p99 = latencies[int(0.99 * len(latencies)) - 1]
    print(f"simpy {simpy.__version__}: {n} requests in {secs:.3f} s = {n / secs:.0f} req/s (p99 {p99:.6f} s)")
    print(f"rate_req_per_s {n / secs:.0f}")


if __name__ == "__main__":
    main()
