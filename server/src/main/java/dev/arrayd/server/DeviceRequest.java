package dev.arrayd.server;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One entry of {@code --devices}: a backend and how many devices to open from it.
 * {@code cpu} = one device with all cores; {@code cpu:2} = two devices splitting the cores;
 * for other backends, no count = every device the backend finds.
 */
record DeviceRequest(String backend, int count) {

    /** Parses {@code cpu}, {@code cpu:2}, {@code cpu,opencl}; {@code none} is no device of this host's. */
    static List<DeviceRequest> parseList(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("--devices: empty (expected: e.g. cpu, cpu:2 or cpu,opencl)");
        }
        List<DeviceRequest> out = new ArrayList<>();
        if (spec.strip().equals("none")) {
            return out; // a daemon that only serves its peers' devices
        }
        Set<String> seen = new LinkedHashSet<>();
        for (String part : spec.split(",")) {
            String p = part.trim();
            String backend = p;
            int count = 0;
            int colon = p.indexOf(':');
            if (colon >= 0) {
                backend = p.substring(0, colon);
                try {
                    count = Integer.parseInt(p.substring(colon + 1));
                } catch (NumberFormatException e) {
                    count = -1;
                }
                if (count < 1 || count > 256) {
                    throw new IllegalArgumentException("--devices: \"" + p + "\" (expected: <backend>[:<count>] with 1 <= count <= 256)");
                }
            }
            if (!backend.matches("[a-z]+")) {
                throw new IllegalArgumentException("--devices: \"" + p + "\" (expected: a backend name such as cpu)");
            }
            if (!seen.add(backend)) {
                throw new IllegalArgumentException("--devices: backend \"" + backend + "\" named twice");
            }
            out.add(new DeviceRequest(backend, count));
        }
        return out;
    }
}
