typedef int32_t arrayd_i32;
typedef int64_t arrayd_i64;
typedef uint8_t arrayd_u8;
typedef uint16_t arrayd_u16;
typedef uint32_t arrayd_u32;
typedef uint64_t arrayd_u64;
/* always inlined: gcc would not inline a helper into a kernel marked ARRAYD_RELAXED (different options) */
#define ARRAYD_FN static inline __attribute__((always_inline))
/* each kernel inlines into its trampoline (and its guarded fallback): arrayd_ok becomes a constant there */
#undef ARRAYD_KERNEL
#define ARRAYD_KERNEL static inline __attribute__((always_inline))
/* a kernel with relaxed floating point, and its trampoline (see CRenderer#RELAXED) */
#define ARRAYD_RELAXED __attribute__((optimize("associative-math", "no-signed-zeros", "no-trapping-math", "fp-contract=fast")))
/* a kernel calling the math library, and its trampolines: 256-bit vectors at most (see CRenderer#NARROW) */
#if defined(__x86_64__)
#define ARRAYD_NARROW __attribute__((target("prefer-vector-width=256")))
#else
#define ARRAYD_NARROW
#endif
ARRAYD_FN float arrayd_u32_as_f32(arrayd_u32 u) { float f; memcpy(&f, &u, 4); return f; }
ARRAYD_FN arrayd_u32 arrayd_f32_as_u32(float f) { arrayd_u32 u; memcpy(&u, &f, 4); return u; }
ARRAYD_FN double arrayd_u64_as_f64(arrayd_u64 u) { double f; memcpy(&f, &u, 8); return f; }
/* IEEE negation as a sign flip of the bits (see CRenderer#negate) */
ARRAYD_FN float arrayd_negf(float x) { return arrayd_u32_as_f32(arrayd_f32_as_u32(x) ^ 0x80000000u); }
ARRAYD_FN double arrayd_neg(double x) { arrayd_u64 u; memcpy(&u, &x, 8); u ^= (arrayd_u64)1 << 63; memcpy(&x, &u, 8); return x; }
/* overflow-checked arithmetic of the hoisted guards' predicates: any overflow makes *ov 1 */
ARRAYD_FN arrayd_i64 arrayd_cadd(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r; if (__builtin_add_overflow(a, b, &r)) *ov = 1; return r; }
ARRAYD_FN arrayd_i64 arrayd_csub(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r; if (__builtin_sub_overflow(a, b, &r)) *ov = 1; return r; }
ARRAYD_FN arrayd_i64 arrayd_cmul(arrayd_i64 a, arrayd_i64 b, int *ov) { arrayd_i64 r; if (__builtin_mul_overflow(a, b, &r)) *ov = 1; return r; }
/* the first guard to catch an index records it; the rest only skip their access (a cold call, not inlined) */
static inline __attribute__((cold)) void arrayd_oob(arrayd_i64 *g, arrayd_i64 id, arrayd_i64 i) {
    arrayd_i64 zero = 0;
    if (__atomic_compare_exchange_n(&g[0], &zero, id + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) g[1] = i;
}
ARRAYD_FN float arrayd_fminf(float a, float b) { return a != a ? b : b != b ? a : a < b ? a : b; }
ARRAYD_FN float arrayd_fmaxf(float a, float b) { return a != a ? b : b != b ? a : a > b ? a : b; }
ARRAYD_FN double arrayd_fmin(double a, double b) { return a != a ? b : b != b ? a : a < b ? a : b; }
ARRAYD_FN double arrayd_fmax(double a, double b) { return a != a ? b : b != b ? a : a > b ? a : b; }
ARRAYD_FN arrayd_i32 arrayd_div_i32(arrayd_i32 a, arrayd_i32 b) { return b == 0 ? 0 : b == -1 ? (arrayd_i32)(0u - (arrayd_u32)a) : a / b; }
ARRAYD_FN arrayd_i32 arrayd_rem_i32(arrayd_i32 a, arrayd_i32 b) { return b == 0 || b == -1 ? 0 : a % b; }
ARRAYD_FN arrayd_i64 arrayd_div_i64(arrayd_i64 a, arrayd_i64 b) { return b == 0 ? 0 : b == -1 ? (arrayd_i64)((arrayd_u64)0 - (arrayd_u64)a) : a / b; }
ARRAYD_FN arrayd_i64 arrayd_rem_i64(arrayd_i64 a, arrayd_i64 b) { return b == 0 || b == -1 ? 0 : a % b; }
ARRAYD_FN arrayd_u8 arrayd_div_u8(arrayd_u8 a, arrayd_u8 b) { return b == 0 ? 0 : (arrayd_u8)(a / b); }
ARRAYD_FN arrayd_u8 arrayd_rem_u8(arrayd_u8 a, arrayd_u8 b) { return b == 0 ? 0 : (arrayd_u8)(a % b); }
ARRAYD_FN arrayd_i32 arrayd_f2i32(double x) { return x != x ? 0 : x >= 2147483647.0 ? 2147483647 : x <= -2147483648.0 ? (-2147483647 - 1) : (arrayd_i32)x; }
ARRAYD_FN arrayd_i64 arrayd_f2i64(double x) { return x != x ? 0 : x >= 9223372036854775807.0 ? (arrayd_i64)((~(arrayd_u64)0) >> 1) : x <= -9223372036854775808.0 ? -(arrayd_i64)((~(arrayd_u64)0) >> 1) - 1 : (arrayd_i64)x; }
ARRAYD_FN arrayd_u8 arrayd_f2u8(double x) { return (arrayd_u8)(arrayd_f2i32(x) & 0xff); }
ARRAYD_FN float arrayd_h2f(arrayd_u16 h) {
    arrayd_u32 sign = ((arrayd_u32)h & 0x8000u) << 16, e = ((arrayd_u32)h >> 10) & 0x1fu, m = (arrayd_u32)h & 0x3ffu;
    if (e == 0x1fu) return arrayd_u32_as_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        if (m == 0) return arrayd_u32_as_f32(sign);
        arrayd_i32 ee = 1;
        while ((m & 0x400u) == 0) { m <<= 1; ee--; }
        return arrayd_u32_as_f32(sign | ((arrayd_u32)(ee + 112) << 23) | ((m & 0x3ffu) << 13));
    }
    return arrayd_u32_as_f32(sign | ((e + 112u) << 23) | (m << 13));
}
ARRAYD_FN arrayd_u16 arrayd_f2h(float f) {
    arrayd_u32 x = arrayd_f32_as_u32(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (arrayd_u16)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) return (arrayd_u16)(sign | 0x7c00u);
    if (ax >= 0x38800000u) {
        arrayd_u32 r = ax - 0x38000000u, h = r >> 13, rem = r & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
        return (arrayd_u16)(sign | h);
    }
    arrayd_u32 e = ax >> 23;
    if (e < 102u) return (arrayd_u16)sign;
    arrayd_u32 m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e, h = m >> shift;
    arrayd_u32 rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (h & 1u))) h++;
    return (arrayd_u16)(sign | h);
}
ARRAYD_FN float arrayd_bf2f(arrayd_u16 h) { return arrayd_u32_as_f32((arrayd_u32)h << 16); }
ARRAYD_FN arrayd_u16 arrayd_f2bf(float f) {
    arrayd_u32 x = arrayd_f32_as_u32(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (arrayd_u16)((x >> 16) | 0x40u);
    return (arrayd_u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
ARRAYD_FN float arrayd_ld_f32(const float *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN double arrayd_ld_f64(const double *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_i32 arrayd_ld_i32(const arrayd_i32 *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_i64 arrayd_ld_i64(const arrayd_i64 *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_u8 arrayd_ld_u8(const arrayd_u8 *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}
ARRAYD_FN arrayd_u16 arrayd_ld_u16(const arrayd_u16 *a, arrayd_i64 i, arrayd_i64 n, arrayd_i64 *g, arrayd_i64 id) {
    if ((arrayd_u64)i < (arrayd_u64)n) return a[i];
    arrayd_oob(g, id, i);
    return 0;
}

ARRAYD_KERNEL void matmul(ARRAYD_ITEM, const float *p_a, const float *p_b, float *p_c, const arrayd_i32 p_m, const arrayd_i32 p_n, const arrayd_i32 p_k, const arrayd_i64 *arrayd_ext, arrayd_i64 *arrayd_guard, const arrayd_i32 arrayd_one, const int arrayd_ok) {
    const arrayd_i64 v_row = arrayd_global_id(1);
    const arrayd_i64 v_col = arrayd_global_id(0);
    if (arrayd_ok || (((arrayd_i32)(v_row < ((arrayd_i64)p_m))) && ((arrayd_i32)(v_col < ((arrayd_i64)p_n))))) {
        float v_acc = (0x0.0p0f);
        for (arrayd_i64 v_kk = ((arrayd_i64)0); v_kk < ((arrayd_i64)p_k); v_kk += 1) {
            v_acc = (v_acc + (p_a[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_k))) + (arrayd_u64)v_kk))] * p_b[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_kk * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)v_col))]));
        }
        p_c[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)v_col))] = v_acc;
    }
}
ARRAYD_FN int arrayd_ok_matmul(ARRAYD_ITEM, const arrayd_i64 *arrayd_lo, const arrayd_i64 *arrayd_hi, const float *p_a, const float *p_b, const float *p_c, const arrayd_i32 p_m, const arrayd_i32 p_n, const arrayd_i32 p_k, const arrayd_i64 *arrayd_ext) {
    const arrayd_i32 arrayd_one = 1;
    (void)arrayd_one;
    int arrayd_ov = 0;
    arrayd_i64 arrayd_mn, arrayd_mx, arrayd_rmn, arrayd_rmx, arrayd_a, arrayd_b, arrayd_c;
    arrayd_mn = 0;
    arrayd_mx = arrayd_mn;
    arrayd_a = 0;
    arrayd_a = arrayd_cadd(arrayd_a, 1, &arrayd_ov);
    arrayd_b = arrayd_cmul(arrayd_a, arrayd_lo[1], &arrayd_ov);
    arrayd_c = arrayd_cmul(arrayd_a, arrayd_hi[1], &arrayd_ov);
    arrayd_mn = arrayd_cadd(arrayd_mn, arrayd_b < arrayd_c ? arrayd_b : arrayd_c, &arrayd_ov);
    arrayd_mx = arrayd_cadd(arrayd_mx, arrayd_b < arrayd_c ? arrayd_c : arrayd_b, &arrayd_ov);
    arrayd_rmn = 0;
    arrayd_c = arrayd_cmul(1, (arrayd_i64)(((arrayd_i64)p_m)), &arrayd_ov);
    arrayd_rmn = arrayd_cadd(arrayd_rmn, arrayd_c, &arrayd_ov);
    arrayd_rmx = arrayd_rmn;
    if (arrayd_ov || !(arrayd_mx < arrayd_rmn)) return 0;
    arrayd_mn = 0;
    arrayd_mx = arrayd_mn;
    arrayd_a = 0;
    arrayd_a = arrayd_cadd(arrayd_a, 1, &arrayd_ov);
    arrayd_b = arrayd_cmul(arrayd_a, arrayd_lo[0], &arrayd_ov);
    arrayd_c = arrayd_cmul(arrayd_a, arrayd_hi[0], &arrayd_ov);
    arrayd_mn = arrayd_cadd(arrayd_mn, arrayd_b < arrayd_c ? arrayd_b : arrayd_c, &arrayd_ov);
    arrayd_mx = arrayd_cadd(arrayd_mx, arrayd_b < arrayd_c ? arrayd_c : arrayd_b, &arrayd_ov);
    arrayd_rmn = 0;
    arrayd_c = arrayd_cmul(1, (arrayd_i64)(((arrayd_i64)p_n)), &arrayd_ov);
    arrayd_rmn = arrayd_cadd(arrayd_rmn, arrayd_c, &arrayd_ov);
    arrayd_rmx = arrayd_rmn;
    if (arrayd_ov || !(arrayd_mx < arrayd_rmn)) return 0;
    return 1;
}
ARRAYD_KERNEL void arrayd_lanes_matmul(ARRAYD_ITEM, const float *p_a, const float *p_b, float *p_c, const arrayd_i32 p_m, const arrayd_i32 p_n, const arrayd_i32 p_k, const arrayd_i64 *arrayd_ext, arrayd_i64 *arrayd_guard, const arrayd_i32 arrayd_one) {
    const int arrayd_ok = 1;
    (void)arrayd_ok;
    const arrayd_i64 v_row = arrayd_global_id(1);
    {
        float v_acc[16];
        #pragma GCC ivdep
        for (int arrayd_l = 0; arrayd_l < 16; arrayd_l++) {
            v_acc[arrayd_l] = (0x0.0p0f);
        }
        for (arrayd_i64 v_kk = ((arrayd_i64)0); v_kk < ((arrayd_i64)p_k); v_kk += 1) {
            #pragma GCC ivdep
            for (int arrayd_l = 0; arrayd_l < 16; arrayd_l++) {
                v_acc[arrayd_l] = (v_acc[arrayd_l] + (p_a[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_k))) + (arrayd_u64)v_kk))] * p_b[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_kk * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)((arrayd_global_id(0) + arrayd_l))))]));
            }
        }
        #pragma GCC ivdep
        for (int arrayd_l = 0; arrayd_l < 16; arrayd_l++) {
            p_c[((arrayd_i64)((arrayd_u64)((arrayd_i64)((arrayd_u64)v_row * (arrayd_u64)((arrayd_i64)p_n))) + (arrayd_u64)((arrayd_global_id(0) + arrayd_l))))] = v_acc[arrayd_l];
        }
    }
}
