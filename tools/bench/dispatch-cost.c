/* What a per-span dispatch mechanism costs: the same AVX2 blend span (16 or 64 pixels,
 * L1-resident) called 20M times (1) directly, (2) through a function-pointer table as
 * CRasterSIMD does (one load, a NULL check, an indirect call), (3) through an ifunc (what
 * clang's target_clones builds), (4) through a switch on a global. Best of 3 per round.
 *   clang -O2 tools/bench/dispatch-cost.c -o /tmp/dispatch-cost && /tmp/dispatch-cost 16 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define AVX2 __attribute__((target("avx2")))
AVX2 static inline __m256i blend8(__m256i v, __m256i inv, __m256i lo, __m256i hi) {
    const __m256i low = _mm256_set1_epi16(0x00FF), high = _mm256_set1_epi16((short)0xFF00);
    __m256i a = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_and_si256(v, low), inv), lo);
    __m256i b = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_srli_epi16(v, 8), inv), hi);
    a = _mm256_srli_epi16(_mm256_add_epi16(a, _mm256_srli_epi16(a, 8)), 8);
    b = _mm256_and_si256(_mm256_add_epi16(b, _mm256_srli_epi16(b, 8)), high);
    return _mm256_or_si256(a, b);
}
AVX2 __attribute__((noinline)) void span_avx2(uint32_t *p, size_t n, uint32_t inv, uint32_t lo, uint32_t hi) {
    __m256i vi = _mm256_set1_epi16((short)inv), vl = _mm256_set1_epi32((int)lo), vh = _mm256_set1_epi32((int)hi);
    for (size_t i = 0; i + 8 <= n; i += 8) _mm256_storeu_si256((__m256i *)(p + i), blend8(_mm256_loadu_si256((__m256i *)(p + i)), vi, vl, vh));
}
__attribute__((noinline)) void span_base(uint32_t *p, size_t n, uint32_t inv, uint32_t lo, uint32_t hi) { (void)p; (void)n; (void)inv; (void)lo; (void)hi; }
typedef void (*fn)(uint32_t *, size_t, uint32_t, uint32_t, uint32_t);
struct table { int isa; fn blend; };
static struct table t_avx2 = {1, span_avx2};
const struct table *active_table;
int active_isa;
/* ifunc, as target_clones would build */
static fn resolve(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx2") ? span_avx2 : span_base; }
void span_ifunc(uint32_t *, size_t, uint32_t, uint32_t, uint32_t) __attribute__((ifunc("resolve")));
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)atoi(argv[1]) : 16;
    active_table = &t_avx2; active_isa = 1;
    static uint32_t buf[4096] __attribute__((aligned(64)));
    const long N = 20000000;
    for (int round = 0; round < 3; round++) {
        double best[4] = {1e9, 1e9, 1e9, 1e9};
        for (int rep = 0; rep < 3; rep++) {
            double t0 = now();
            for (long i = 0; i < N; i++) span_avx2(buf + ((i * 64) & 2047), n, 128, 0x00800080, 0x00800080);
            double t1 = now();
            for (long i = 0; i < N; i++) { const struct table *t = active_table; if (t->blend) t->blend(buf + ((i * 64) & 2047), n, 128, 0x00800080, 0x00800080); }
            double t2 = now();
            for (long i = 0; i < N; i++) span_ifunc(buf + ((i * 64) & 2047), n, 128, 0x00800080, 0x00800080);
            double t3 = now();
            for (long i = 0; i < N; i++) { switch (active_isa) { case 1: span_avx2(buf + ((i * 64) & 2047), n, 128, 0x00800080, 0x00800080); break; default: span_base(buf, n, 0, 0, 0); } }
            double t4 = now();
            double d[4] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3};
            for (int k = 0; k < 4; k++) if (d[k] < best[k]) best[k] = d[k];
        }
        printf("span %zu px: direct %.2f ns, table %.2f ns, ifunc %.2f ns, switch %.2f ns per call\n", n,
               best[0] / N * 1e9, best[1] / N * 1e9, best[2] / N * 1e9, best[3] / N * 1e9);
    }
}
