#!/usr/bin/env bash
# The processor's single-precision multiply-add peak, per core and for all cores at once:
# twelve independent chains of AVX-512 FMAs (AVX2 where AVX-512 is missing), the
# ceiling that any f32 matrix multiply, hyde-eval's or torch's, runs under. Needs a C
# compiler (cc). scripts/local_model_bench.py prints the GFLOPS both embedders reach.
# Usage: scripts/fma_peak.sh
set -euo pipefail
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/peak.c" <<'C'
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#ifdef __AVX512F__
typedef __m512 vector;
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define STORE _mm512_storeu_ps
#else
typedef __m256 vector;
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define STORE _mm256_storeu_ps
#endif
#define CHAINS 12

int main(void) {
    vector chains[CHAINS];
    vector factor = SET1(1.0000001f), addend = SET1(1e-7f);
    for (int chain = 0; chain < CHAINS; chain++) chains[chain] = SET1((float)chain);
    const long rounds = 200000000;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long round = 0; round < rounds; round++) {
#pragma GCC unroll 12
        for (int chain = 0; chain < CHAINS; chain++)
            chains[chain] = FMA(chains[chain], factor, addend);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) * 1e-9;
    float lanes[LANES], sum = 0;
    for (int chain = 0; chain < CHAINS; chain++) {
        STORE(lanes, chains[chain]);
        sum += lanes[0];
    }
    printf("%.1f %g\n", rounds * (double)CHAINS * LANES * 2 / seconds / 1e9, sum);
    return 0;
}
C
cc -O2 -march=native -o "$work/peak" "$work/peak.c"
cores="$(nproc)"
one="$("$work/peak" | cut -d' ' -f1)"
all="$(for _ in $(seq "$cores"); do "$work/peak" & done | awk '{ sum += $1 } END { printf "%.1f", sum }')"
echo "f32 FMA peak: $one GFLOPS on one core; $all GFLOPS on all $cores cores at once"
