package dev.arrayd.devices.opencl;

import org.jocl.cl_device_id;
import org.jocl.cl_platform_id;

import java.util.List;

/** One OpenCL platform (driver) as discovered, with every device it offers, in the driver's order. */
record ClPlatform(cl_platform_id id, String name, List<cl_device_id> devices) {

    ClPlatform {
        devices = List.copyOf(devices);
    }
}
