package dev.arrayd.devices.api.ir;

/**
 * f16 / bf16 storage conversions, written out bit by bit so that the interpreter and the rendered C,
 * OpenCL C and CUDA C (which spell the same algorithm, see {@link CLikeRenderer}) agree on every bit:
 * round to nearest even, overflow to infinity, NaN kept quiet with its top payload bits.
 */
public final class Half {

    private Half() {}

    public static float f16ToF32(short h) {
        int x = h & 0xffff;
        int sign = (x & 0x8000) << 16;
        int e = (x >>> 10) & 0x1f;
        int m = x & 0x3ff;
        if (e == 0x1f) {
            return Float.intBitsToFloat(sign | 0x7f800000 | (m << 13));
        }
        if (e == 0) {
            if (m == 0) {
                return Float.intBitsToFloat(sign);
            }
            e = 1;
            while ((m & 0x400) == 0) {
                m <<= 1;
                e--;
            }
            m &= 0x3ff;
        }
        return Float.intBitsToFloat(sign | ((e + 112) << 23) | (m << 13));
    }

    public static short f32ToF16(float f) {
        int x = Float.floatToRawIntBits(f);
        int sign = (x >>> 16) & 0x8000;
        int ax = x & 0x7fffffff;
        if (ax > 0x7f800000) {
            return (short) (sign | 0x7e00 | ((ax >>> 13) & 0x3ff));
        }
        if (ax >= 0x477ff000) {
            return (short) (sign | 0x7c00);
        }
        if (ax >= 0x38800000) {
            int r = ax - 0x38000000;
            int h = r >>> 13;
            int rem = r & 0x1fff;
            if (rem > 0x1000 || (rem == 0x1000 && (h & 1) != 0)) {
                h++;
            }
            return (short) (sign | h);
        }
        int e = ax >>> 23;
        if (e < 102) {
            return (short) sign;
        }
        int m = (ax & 0x7fffff) | 0x800000;
        int shift = 126 - e;
        int h = m >>> shift;
        int rem = m & ((1 << shift) - 1);
        int halfway = 1 << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1) != 0)) {
            h++;
        }
        return (short) (sign | h);
    }

    public static float bf16ToF32(short h) {
        return Float.intBitsToFloat((h & 0xffff) << 16);
    }

    public static short f32ToBf16(float f) {
        int x = Float.floatToRawIntBits(f);
        if ((x & 0x7fffffff) > 0x7f800000) {
            return (short) ((x >>> 16) | 0x40);
        }
        int lsb = (x >>> 16) & 1;
        return (short) ((x + 0x7fff + lsb) >>> 16);
    }
}
