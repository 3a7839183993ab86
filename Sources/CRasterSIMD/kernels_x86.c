/* x86-64 span loops. Each computes exactly what its Swift kernel in Kernels.swift computes
 * (same formula per 16-bit lane, same rounding); RasterTests compare them pixel for pixel.
 * Functions marked target("avx2") run only after dispatch.c has seen AVX2. */
#include "kernels_x86.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#define AVX2 __attribute__((target("avx2")))

/* ---------------------------------------------------------------- scalar reference */

/* ConstantBlend.apply: per channel pair x = d * inv + c, then (x + (x >> 8)) >> 8. */
static inline uint32_t blend1(uint32_t d, uint32_t inv, uint32_t lo, uint32_t hi) {
    uint32_t l = (d & 0x00FF00FFu) * inv + lo;
    uint32_t h = ((d >> 8) & 0x00FF00FFu) * inv + hi;
    l = ((l + ((l >> 8) & 0x00FF00FFu)) >> 8) & 0x00FF00FFu;
    h = ((h + ((h >> 8) & 0x00FF00FFu)) >> 8) & 0x00FF00FFu;
    return l | (h << 8);
}

/* blendPixel(dst, src, a). */
static inline uint32_t blend_pixel(uint32_t d, uint32_t s, uint32_t a) {
    uint32_t inv = 255 - a;
    return blend1(d, inv, (s & 0x00FF00FFu) * a + 0x00800080u, ((s >> 8) & 0x00FF00FFu) * a + 0x00800080u);
}

/* ---------------------------------------------------------------- streaming (SSE2) */

static inline void stream_row_sse2(uint8_t *d, const uint8_t *s, size_t n) {
    size_t head = (size_t)(-(uintptr_t)d) & 15;
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head; s += head; n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    for (; n >= 16; n -= 16, d += 16, s += 16) _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
    memcpy(d, s, n);
}

void cadence_stream_copy_rows_sse2(void *dst, ptrdiff_t dst_stride, const void *src, ptrdiff_t src_stride,
                                   size_t bytes, size_t rows) {
    for (size_t r = 0; r < rows; r++)
        stream_row_sse2((uint8_t *)dst + (ptrdiff_t)r * dst_stride, (const uint8_t *)src + (ptrdiff_t)r * src_stride, bytes);
    _mm_sfence();
}

static inline void fill_scalar(uint32_t *p, size_t n, uint32_t pixel) {
    for (size_t i = 0; i < n; i++) p[i] = pixel;
}

void cadence_stream_fill_rows_sse2(void *base, ptrdiff_t stride, size_t count, size_t rows, uint32_t pixel) {
    const __m128i v = _mm_set1_epi32((int)pixel);
    for (size_t r = 0; r < rows; r++) {
        uint32_t *p = (uint32_t *)((uint8_t *)base + (ptrdiff_t)r * stride);
        size_t n = count;
        size_t head = ((size_t)(-(uintptr_t)p) & 15) >> 2;
        if (head > n) head = n;
        fill_scalar(p, head, pixel);
        p += head; n -= head;
        for (; n >= 16; n -= 16, p += 16) {
            _mm_stream_si128((__m128i *)p, v);
            _mm_stream_si128((__m128i *)(p + 4), v);
            _mm_stream_si128((__m128i *)(p + 8), v);
            _mm_stream_si128((__m128i *)(p + 12), v);
        }
        for (; n >= 4; n -= 4, p += 4) _mm_stream_si128((__m128i *)p, v);
        fill_scalar(p, n, pixel);
    }
    _mm_sfence();
}

/* ---------------------------------------------------------------- AVX2 */

/* Cached copy of one row of n >= 32 bytes: the first and last 32 bytes unaligned, the rest as
 * 32-byte-aligned stores of unaligned loads (the destination is never read). */
AVX2 static inline void copy_row_avx2(uint8_t *d, const uint8_t *s, size_t n) {
    const __m256i first = _mm256_loadu_si256((const __m256i *)s);
    const __m256i last = _mm256_loadu_si256((const __m256i *)(s + n - 32));
    uint8_t *const end = d + n;
    size_t head = 32 - ((uintptr_t)d & 31);
    uint8_t *dd = d + head;
    const uint8_t *ss = s + head;
    size_t k = n - head;
    for (; k >= 128; k -= 128, dd += 128, ss += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)ss), b = _mm256_loadu_si256((const __m256i *)(ss + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(ss + 64)), e = _mm256_loadu_si256((const __m256i *)(ss + 96));
        _mm256_store_si256((__m256i *)dd, a);
        _mm256_store_si256((__m256i *)(dd + 32), b);
        _mm256_store_si256((__m256i *)(dd + 64), c);
        _mm256_store_si256((__m256i *)(dd + 96), e);
    }
    for (; k >= 32; k -= 32, dd += 32, ss += 32) _mm256_store_si256((__m256i *)dd, _mm256_loadu_si256((const __m256i *)ss));
    _mm256_storeu_si256((__m256i *)d, first);
    _mm256_storeu_si256((__m256i *)(end - 32), last);
}

AVX2 void cadence_copy_rows_avx2(void *dst, ptrdiff_t dst_stride, const void *src, ptrdiff_t src_stride,
                                 size_t bytes, size_t rows) {
    for (size_t r = 0; r < rows; r++) {
        uint8_t *d = (uint8_t *)dst + (ptrdiff_t)r * dst_stride;
        const uint8_t *s = (const uint8_t *)src + (ptrdiff_t)r * src_stride;
        if (bytes < 32) memcpy(d, s, bytes);
        else copy_row_avx2(d, s, bytes);
    }
}

AVX2 void cadence_stream_copy_rows_avx2(void *dst, ptrdiff_t dst_stride, const void *src, ptrdiff_t src_stride,
                                        size_t bytes, size_t rows) {
    for (size_t r = 0; r < rows; r++) {
        uint8_t *d = (uint8_t *)dst + (ptrdiff_t)r * dst_stride;
        const uint8_t *s = (const uint8_t *)src + (ptrdiff_t)r * src_stride;
        size_t n = bytes;
        size_t head = (size_t)(-(uintptr_t)d) & 31;
        if (head > n) head = n;
        memcpy(d, s, head);
        d += head; s += head; n -= head;
        for (; n >= 128; n -= 128, d += 128, s += 128) {
            __m256i a = _mm256_loadu_si256((const __m256i *)s), b = _mm256_loadu_si256((const __m256i *)(s + 32));
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64)), e = _mm256_loadu_si256((const __m256i *)(s + 96));
            _mm256_stream_si256((__m256i *)d, a);
            _mm256_stream_si256((__m256i *)(d + 32), b);
            _mm256_stream_si256((__m256i *)(d + 64), c);
            _mm256_stream_si256((__m256i *)(d + 96), e);
        }
        for (; n >= 32; n -= 32, d += 32, s += 32) _mm256_stream_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
        memcpy(d, s, n);
    }
    _mm_sfence();
}

AVX2 void cadence_stream_fill_rows_avx2(void *base, ptrdiff_t stride, size_t count, size_t rows, uint32_t pixel) {
    const __m256i v = _mm256_set1_epi32((int)pixel);
    for (size_t r = 0; r < rows; r++) {
        uint32_t *p = (uint32_t *)((uint8_t *)base + (ptrdiff_t)r * stride);
        size_t n = count;
        size_t head = ((size_t)(-(uintptr_t)p) & 31) >> 2;
        if (head > n) head = n;
        fill_scalar(p, head, pixel);
        p += head; n -= head;
        for (; n >= 32; n -= 32, p += 32) {
            _mm256_stream_si256((__m256i *)p, v);
            _mm256_stream_si256((__m256i *)(p + 8), v);
            _mm256_stream_si256((__m256i *)(p + 16), v);
            _mm256_stream_si256((__m256i *)(p + 24), v);
        }
        for (; n >= 8; n -= 8, p += 8) _mm256_stream_si256((__m256i *)p, v);
        fill_scalar(p, n, pixel);
    }
    _mm_sfence();
}

/* fillKernel: whole vectors, then one final vector ending exactly at the span's end. */
AVX2 static inline void fill_span_avx2(uint32_t *p, size_t n, uint32_t pixel) {
    if (n < 8) {
        if (n >= 4) {
            const __m128i v = _mm_set1_epi32((int)pixel);
            _mm_storeu_si128((__m128i *)p, v);
            _mm_storeu_si128((__m128i *)(p + n - 4), v);
        } else {
            fill_scalar(p, n, pixel);
        }
        return;
    }
    const __m256i v = _mm256_set1_epi32((int)pixel);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm256_storeu_si256((__m256i *)(p + i), v);
        _mm256_storeu_si256((__m256i *)(p + i + 8), v);
        _mm256_storeu_si256((__m256i *)(p + i + 16), v);
        _mm256_storeu_si256((__m256i *)(p + i + 24), v);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_si256((__m256i *)(p + i), v);
    if (i < n) _mm256_storeu_si256((__m256i *)(p + n - 8), v);
}

AVX2 void cadence_fill_rows_avx2(void *base, ptrdiff_t stride, size_t count, size_t rows, uint32_t pixel) {
    uint8_t *p = (uint8_t *)base;
    for (size_t r = 0; r < rows; r++, p += stride) fill_span_avx2((uint32_t *)p, count, pixel);
}

/* blendVector on eight pixels: the low bytes (blue, red) and high bytes (green, alpha) of
 * each 16-bit lane separately, x = d * inv + c, (x + (x >> 8)) >> 8. */
AVX2 static inline __m256i blend8(__m256i v, __m256i inv, __m256i lo, __m256i hi) {
    const __m256i low = _mm256_set1_epi16(0x00FF), high = _mm256_set1_epi16((short)0xFF00);
    __m256i a = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_and_si256(v, low), inv), lo);
    __m256i b = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_srli_epi16(v, 8), inv), hi);
    a = _mm256_srli_epi16(_mm256_add_epi16(a, _mm256_srli_epi16(a, 8)), 8);
    b = _mm256_and_si256(_mm256_add_epi16(b, _mm256_srli_epi16(b, 8)), high);
    return _mm256_or_si256(a, b);
}

/* The same on four pixels. */
static inline __m128i blend4(__m128i v, __m128i inv, __m128i lo, __m128i hi) {
    const __m128i low = _mm_set1_epi16(0x00FF), high = _mm_set1_epi16((short)0xFF00);
    __m128i a = _mm_add_epi16(_mm_mullo_epi16(_mm_and_si128(v, low), inv), lo);
    __m128i b = _mm_add_epi16(_mm_mullo_epi16(_mm_srli_epi16(v, 8), inv), hi);
    a = _mm_srli_epi16(_mm_add_epi16(a, _mm_srli_epi16(a, 8)), 8);
    b = _mm_and_si128(_mm_add_epi16(b, _mm_srli_epi16(b, 8)), high);
    return _mm_or_si128(a, b);
}

static inline void prefetch_row(const uint8_t *row, size_t bytes) {
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(row + o, 1, 3);
    __builtin_prefetch(row + bytes - 1, 1, 3);
}

/* blendKernel: the first and last eight pixels are loaded before anything is written and
 * stored after the loop, so the loop starts at a 32-byte boundary and ends on whole vectors. */
AVX2 static inline void blend_span_avx2(uint32_t *p, size_t n, __m256i inv, __m256i lo, __m256i hi,
                                        uint32_t inv1, uint32_t lo1, uint32_t hi1) {
    if (n < 8) {
        if (n >= 4) {
            const __m128i i4 = _mm256_castsi256_si128(inv), l4 = _mm256_castsi256_si128(lo), h4 = _mm256_castsi256_si128(hi);
            __m128i tail = _mm_loadu_si128((const __m128i *)(p + n - 4));
            __m128i head = _mm_loadu_si128((const __m128i *)p);
            _mm_storeu_si128((__m128i *)p, blend4(head, i4, l4, h4));
            _mm_storeu_si128((__m128i *)(p + n - 4), blend4(tail, i4, l4, h4));
        } else {
            for (size_t i = 0; i < n; i++) p[i] = blend1(p[i], inv1, lo1, hi1);
        }
        return;
    }
    __m256i tail = _mm256_loadu_si256((const __m256i *)(p + n - 8));
    __m256i head = _mm256_loadu_si256((const __m256i *)p);
    size_t skip = (size_t)((32 - ((uintptr_t)p & 31)) & 31) >> 2;
    size_t i = skip;
    for (; i + 16 <= n; i += 16) {
        __m256i v0 = _mm256_load_si256((const __m256i *)(p + i));
        __m256i v1 = _mm256_load_si256((const __m256i *)(p + i + 8));
        _mm256_store_si256((__m256i *)(p + i), blend8(v0, inv, lo, hi));
        _mm256_store_si256((__m256i *)(p + i + 8), blend8(v1, inv, lo, hi));
    }
    if (i + 8 <= n) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        _mm256_storeu_si256((__m256i *)(p + i), blend8(v, inv, lo, hi));
        i += 8;
    }
    if (i < n) _mm256_storeu_si256((__m256i *)(p + n - 8), blend8(tail, inv, lo, hi));
    if (skip) _mm256_storeu_si256((__m256i *)p, blend8(head, inv, lo, hi));
}

AVX2 void cadence_blend_rows_avx2(void *base, ptrdiff_t stride, size_t count, size_t rows,
                                  uint32_t inv, uint32_t lo, uint32_t hi) {
    if (count == 0) return;
    const __m256i vinv = _mm256_set1_epi16((short)inv);
    const __m256i vlo = _mm256_set1_epi32((int)lo), vhi = _mm256_set1_epi32((int)hi);
    uint8_t *p = (uint8_t *)base;
    const size_t bytes = count * 4;
    for (size_t r = 0; r < rows; r++, p += stride) {
        if (r + 2 < rows) prefetch_row(p + 2 * stride, bytes);
        blend_span_avx2((uint32_t *)p, count, vinv, vlo, vhi, inv, lo, hi);
    }
}

/* Eight pixels with their own alpha: per 16-bit lane inv = 255 - a and c = s * a + 128,
 * then blend8's arithmetic (this is blendPixel lane for lane). */
AVX2 static inline __m256i blend8_mask(__m256i d, __m256i m, __m256i slo, __m256i shi) {
    const __m256i k255 = _mm256_set1_epi16(255), k128 = _mm256_set1_epi16(128);
    __m256i a2 = _mm256_or_si256(m, _mm256_slli_epi32(m, 16));
    __m256i inv = _mm256_sub_epi16(k255, a2);
    __m256i lo = _mm256_add_epi16(_mm256_mullo_epi16(slo, a2), k128);
    __m256i hi = _mm256_add_epi16(_mm256_mullo_epi16(shi, a2), k128);
    return blend8(d, inv, lo, hi);
}

AVX2 void cadence_blend_mask_avx2(uint32_t *dst, const uint8_t *mask, size_t count, uint32_t pixel) {
    const __m256i slo = _mm256_set1_epi32((int)(pixel & 0x00FF00FFu));
    const __m256i shi = _mm256_set1_epi32((int)((pixel >> 8) & 0x00FF00FFu));
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        __m128i m8 = _mm_loadl_epi64((const __m128i *)(mask + i));
        if (_mm_cvtsi128_si64(m8) == 0) continue;
        __m256i m = _mm256_cvtepu8_epi32(m8);
        __m256i d = _mm256_loadu_si256((const __m256i *)(dst + i));
        _mm256_storeu_si256((__m256i *)(dst + i), blend8_mask(d, m, slo, shi));
    }
    for (; i < count; i++) {
        if (mask[i]) dst[i] = blend_pixel(dst[i], pixel, mask[i]);
    }
}

/* Eight positions u, u + step, ... (64-bit), clamped to 0...255 after >> 16, gathered. */
AVX2 void cadence_gradient_span_avx2(uint32_t *dst, size_t count, const uint32_t *lut, int64_t u, int64_t step,
                                     uint32_t alpha_bits) {
    const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi64x(255);
    const __m256i abits = _mm256_set1_epi32((int)alpha_bits);
    const __m256i pack = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    /* Wrapping 64-bit arithmetic, as Swift's &+ and &*. */
    const uint64_t uu = (uint64_t)u, us = (uint64_t)step;
    __m256i u0 = _mm256_setr_epi64x((int64_t)uu, (int64_t)(uu + us), (int64_t)(uu + 2 * us), (int64_t)(uu + 3 * us));
    __m256i u1 = _mm256_add_epi64(u0, _mm256_set1_epi64x((int64_t)(4 * us)));
    const __m256i step8 = _mm256_set1_epi64x((int64_t)(8 * us));
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        /* u >> 16 as a signed shift: logical shift, then negatives (sign bit) clamp to 0. */
        __m256i x0 = _mm256_srli_epi64(u0, 16), x1 = _mm256_srli_epi64(u1, 16);
        x0 = _mm256_blendv_epi8(x0, zero, _mm256_cmpgt_epi64(zero, u0));
        x1 = _mm256_blendv_epi8(x1, zero, _mm256_cmpgt_epi64(zero, u1));
        x0 = _mm256_blendv_epi8(x0, top, _mm256_cmpgt_epi64(x0, top));
        x1 = _mm256_blendv_epi8(x1, top, _mm256_cmpgt_epi64(x1, top));
        /* Low dwords of the eight 64-bit indices, in order. */
        __m256i lo = _mm256_permutevar8x32_epi32(x0, pack), hi = _mm256_permutevar8x32_epi32(x1, pack);
        __m256i idx = _mm256_permute2x128_si256(lo, hi, 0x20);
        __m256i c = _mm256_i32gather_epi32((const int *)lut, idx, 4);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_or_si256(c, abits));
        u0 = _mm256_add_epi64(u0, step8);
        u1 = _mm256_add_epi64(u1, step8);
    }
    uint64_t w = uu + (uint64_t)i * us;
    for (; i < count; i++, w += us) {
        int64_t x = (int64_t)w >> 16;
        dst[i] = lut[x < 0 ? 0 : (x > 255 ? 255 : x)] | alpha_bits;
    }
}

#endif
