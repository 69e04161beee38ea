package dev.arrayd.scheduler;

import dev.arrayd.devices.api.KernelArg;

/**
 * What a client asks of a padded buffer: per axis, elements of padding before ({@code left}) and after
 * ({@code right}) its dims, and the value the padding holds ({@code value}: a scalar of the buffer's dtype,
 * f32 for f16 / bf16; null = zero).
 */
public record Padding(long[] left, long[] right, KernelArg.Scalar value) {

    public Padding {
        left = left.clone();
        right = right.clone();
    }

    @Override
    public long[] left() {
        return left.clone();
    }

    @Override
    public long[] right() {
        return right.clone();
    }
}
