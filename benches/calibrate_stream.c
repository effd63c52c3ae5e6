/* STREAM triad in C, the yardstick for `tco-sim calibrate`'s triad
 * (benches/calibrate_vs_openblas.sh builds it with gcc -O3 -march=native -fopenmp).
 *
 * a[i] = b[i] + s*c[i] over three float arrays of N elements each, NTIMES times; the rate
 * counts 3 x 4 bytes per element, as STREAM does (McCalpin, 1995). Arrays are first touched
 * in parallel with the same static schedule the timed loop uses, as STREAM does, so each
 * thread streams the pages it faulted in. Prints the best and the median rate after one
 * warm-up pass, and checks every element.
 *
 * Usage: calibrate_stream N [NTIMES]          threads: OMP_NUM_THREADS */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

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
    for (int t = -1; t < ntimes; t++) {
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        double dt = omp_get_wtime() - t0;
        if (t >= 0)
            rate[t] = 3.0 * sizeof(float) * (double)n / dt;
    }
    for (long i = 0; i < n; i++) {
        if (a[i] != b[i] + s * c[i]) {
            fprintf(stderr, "wrong result at %ld\n", i);
            return 1;
        }
    }
    qsort(rate, ntimes, sizeof(double), cmp);
    double median = ntimes % 2 ? rate[ntimes / 2] : 0.5 * (rate[ntimes / 2 - 1] + rate[ntimes / 2]);
    printf("threads=%d n=%ld best_gbps=%.2f median_gbps=%.2f\n", omp_get_max_threads(), n,
           rate[ntimes - 1] / 1e9, median / 1e9);
    return 0;
}
