package dev.arrayd.scheduler;

import dev.arrayd.devices.api.KernelSource;

/** A module to compile; {@code backend} empty = every backend whose compiler takes the dialect. */
public record ModuleSpec(KernelSource source, String backend) {}
