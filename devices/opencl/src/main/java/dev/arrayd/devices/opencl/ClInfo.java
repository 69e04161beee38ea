package dev.arrayd.devices.opencl;

import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_device_id;
import org.jocl.cl_platform_id;

import java.nio.charset.StandardCharsets;

/** Typed {@code clGetDeviceInfo} / {@code clGetPlatformInfo} reads. */
final class ClInfo {

    private ClInfo() {}

    static String platformString(cl_platform_id platform, int param) {
        long[] size = new long[1];
        CL.clGetPlatformInfo(platform, param, 0, null, size);
        byte[] bytes = new byte[(int) size[0]];
        CL.clGetPlatformInfo(platform, param, bytes.length, Pointer.to(bytes), null);
        return cString(bytes);
    }

    static String deviceString(cl_device_id device, int param) {
        long[] size = new long[1];
        CL.clGetDeviceInfo(device, param, 0, null, size);
        byte[] bytes = new byte[(int) size[0]];
        CL.clGetDeviceInfo(device, param, bytes.length, Pointer.to(bytes), null);
        return cString(bytes);
    }

    static int deviceUint(cl_device_id device, int param) {
        int[] v = new int[1];
        CL.clGetDeviceInfo(device, param, Sizeof.cl_uint, Pointer.to(v), null);
        return v[0];
    }

    static long deviceUlong(cl_device_id device, int param) {
        long[] v = new long[1];
        CL.clGetDeviceInfo(device, param, Sizeof.cl_ulong, Pointer.to(v), null);
        return v[0];
    }

    /** A {@code size_t} value (JOCL reads it into a long on 64-bit hosts). */
    static long deviceSize(cl_device_id device, int param) {
        long[] v = new long[1];
        CL.clGetDeviceInfo(device, param, Sizeof.size_t, Pointer.to(v), null);
        return v[0];
    }

    static long[] deviceSizes(cl_device_id device, int param, int count) {
        long[] v = new long[count];
        CL.clGetDeviceInfo(device, param, (long) Sizeof.size_t * count, Pointer.to(v), null);
        return v;
    }

    /** A cl_bool, or {@code fallback} when the query is not supported (deprecated queries on newer drivers). */
    static boolean deviceBool(cl_device_id device, int param, boolean fallback) {
        try {
            return deviceUint(device, param) != 0;
        } catch (CLException e) {
            return fallback;
        }
    }

    static String errorName(int status) {
        String name = CL.stringFor_errorCode(status);
        return name == null || name.isBlank() ? "OpenCL error " + status : name;
    }

    private static String cString(byte[] bytes) {
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.UTF_8).trim();
    }
}
