/* STREAM triad in C, the yardstick for `tco-sim calibrate`'s triad
 * (benches/calibrate_vs_openblas.sh builds it with gcc -O3 -march=native -fopenmp).
 *
 * a[i] = b[i] + s*c[i] over three float arrays of N elements each, NTIMES times; the rate
 * counts 3 x 4 bytes per element, as STREAM does (McCalpin, 1995). Arrays are first touched
 * in parallel with the same static schedule the timed loop uses, as STREAM does, so each
 * thread streams the pages it faulted in. Prints the best and the median rate after one
 * warm-up pass, and checks every element. With one thread it also prints the rate per second
 * the thread was on a CPU (CLOCK_THREAD_CPUTIME_ID), which other processes do not lower.
 *
 * Usage: calibrate_stream N [NTIMES]          threads: OMP_NUM_THREADS */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s N [NTIMES]\n", argv[0]);
        return 2;
    }
    long n = atol(argv[1]);
    int ntimes = argc > 2 ? atoi(argv[2]) : 10;
    float *a = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
    float *b = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
    float *c = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64);
    if (!a || !b || !c) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    const float s = 3.0f;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        a[i] = 0.0f;
        b[i] = (float)(i % 1021);
        c[i] = (float)(i % 7) * 0.5f;
    }
    double *rate = malloc(sizeof(double) * ntimes);
    double *oncpu = malloc(sizeof(double) * ntimes);
    for (int t = -1; t < ntimes; t++) {
        double c0 = thread_cpu();
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        double dt = omp_get_wtime() - t0;
        double dc = thread_cpu() - c0;
        if (t >= 0) {
            rate[t] = 3.0 * sizeof(float) * (double)n / dt;
            oncpu[t] = 3.0 * sizeof(float) * (double)n / dc;
        }
    }
    for (long i = 0; i < n; i++) {
        if (a[i] != b[i] + s * c[i]) {
            fprintf(stderr, "wrong result at %ld\n", i);
            return 1;
        }
    }
    qsort(rate, ntimes, sizeof(double), cmp);
    qsort(oncpu, ntimes, sizeof(double), cmp);
#define MEDIAN(v) (ntimes % 2 ? v[ntimes / 2] : 0.5 * (v[ntimes / 2 - 1] + v[ntimes / 2]))
    printf("threads=%d n=%ld best_gbps=%.2f median_gbps=%.2f on_cpu_gbps=%.2f\n",
           omp_get_max_threads(), n, rate[ntimes - 1] / 1e9, MEDIAN(rate) / 1e9,
           omp_get_max_threads() == 1 ? MEDIAN(oncpu) / 1e9 : NAN);
    return 0;
}
