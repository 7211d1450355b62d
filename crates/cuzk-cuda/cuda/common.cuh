// Shared by every translation unit: status conversion, device selection, resident bases.
#ifndef CUZK_CUDA_COMMON_CUH
#define CUZK_CUDA_COMMON_CUH

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>
#include <stdexcept>

#include <cuda_runtime.h>
#include <util/exception.cuh>
#include <util/rusterror.h>
#include <util/gpu_t.cuh>

#include "cuzk_cuda.h"

namespace cuzk {

// An error of ours (bad index, bad argument), as opposed to a CUDA error.
struct error : std::runtime_error {
    int code;
    error(int c, const std::string& m) : std::runtime_error(m), code(c) {}
};

inline cuzk_status_t status(int code, const char* message)
{
    return cuzk_status_t{code, message ? strdup(message) : nullptr};
}

// Runs f, turning every exception into a status: nothing propagates across the C ABI.
template<class F> cuzk_status_t guarded(F f) noexcept
{
    try {
        f();
        return cuzk_status_t{0, nullptr};
    } catch (const error& e) {
        return status(e.code, e.what());
    } catch (const sppark_error& e) {
        return status(e.code() ? e.code() : CUZK_INTERNAL, e.what());
    } catch (const std::bad_alloc&) {
        return status(CUZK_INTERNAL, "host memory allocation failed");
    } catch (const std::exception& e) {
        return status(CUZK_INTERNAL, e.what());
    } catch (...) {
        return status(CUZK_INTERNAL, "unknown C++ exception");
    }
}

// sppark reports failures from inside its MSM as RustError values; ours become exceptions.
inline void check(const RustError& e, const char* what)
{
    if (e.code != 0) {
        std::string m = std::string(what) + ": " + (e.message ? e.message : "CUDA error");
        if (e.message) free(e.message);
        throw error(e.code, m);
    }
}

// sppark's device list entry `device`, made current on this thread, and confirmed: the
// device CUDA now calls current must be that entry's, at the PCI address it was enumerated
// with. The index is checked: sppark's own select_gpu does not bounds-check.
inline const gpu_t& select(uint32_t device)
{
    if (device >= ngpus())
        throw error(CUZK_BAD_DEVICE, "device index " + std::to_string(device) +
                                     " out of range (" + std::to_string(ngpus()) +
                                     " devices)");
    const gpu_t& gpu = select_gpu((int)device);
    int current = -1, bus = -1, domain = -1;
    CUDA_OK(cudaGetDevice(&current));
    CUDA_OK(cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, current));
    CUDA_OK(cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, current));
    const cudaDeviceProp& p = gpu.props();
    if (current != gpu.cid() || bus != p.pciBusID || domain != p.pciDomainID)
        throw error(CUZK_BAD_DEVICE,
                    "selecting device " + std::to_string(device) + " made CUDA device " +
                        std::to_string(current) + " current, not " + std::to_string(gpu.cid()));
    return gpu;
}

// Whether the current device still runs work: false after a sticky error (an illegal
// address, a device that fell off the bus), which every later call on it returns.
inline bool device_ok() noexcept
{
    return cudaDeviceSynchronize() == cudaSuccess;
}

// Deletes sppark objects whose destructors synchronize through CUDA_OK, which throws; a throw
// inside a destructor is std::terminate, the whole process. On a broken device the object is
// left allocated instead: its memory belongs to a context that cannot run anything any more,
// and the process (and every other device) lives on.
struct destroy_if_device_ok {
    template<class T> void operator()(T* p) const noexcept
    {
        if (p != nullptr && device_ok())
            delete p;
    }
};

inline void require(bool ok, const char* message)
{
    if (!ok) throw error(CUZK_BAD_ARGUMENT, message);
}

// Timing events of one call: marks recorded on streams, read as milliseconds from the first
// (which every later mark must follow: streams other than the first's wait on it).
class call_clock {
    std::vector<cudaEvent_t> evs;

public:
    call_clock() = default;
    call_clock(const call_clock&) = delete;
    call_clock& operator=(const call_clock&) = delete;
    ~call_clock()
    {
        for (cudaEvent_t e : evs)
            (void)cudaEventDestroy(e);
    }
    // A mark recorded on `s` now; the first one is the call's origin.
    cudaEvent_t mark(cudaStream_t s)
    {
        cudaEvent_t e = nullptr;
        CUDA_OK(cudaEventCreate(&e));
        evs.push_back(e);
        CUDA_OK(cudaEventRecord(e, s));
        return e;
    }
    // Milliseconds from the origin to `e` (waits for `e`).
    float at(cudaEvent_t e)
    {
        float t = 0;
        CUDA_OK(cudaEventSynchronize(e));
        CUDA_OK(cudaEventElapsedTime(&t, evs.at(0), e));
        return t;
    }
};

// The G1 MSM of n affine bases in host memory (streamed to the device in batches) with
// Montgomery-form scalars already in this device's memory; `out` is a Jacobian point.
void g1_msm_host_bases(uint32_t device, const void* bases, const void* d_scalars, size_t n,
                       void* out);

} // namespace cuzk

// Device memory a proof works in, allocated once (cudaMalloc, outside the stream-ordered pool)
// and reused by every proof of that size on the device.
struct cuzk_buffer {
    uint32_t device;
    size_t bytes;
    void* ptr;
};

// Bases kept on one device; G1 and G2 implement it in their own translation units (sppark's
// MSM template is instantiated once per unit through global typedefs).
struct cuzk_resident {
    uint32_t device;
    size_t n;
    cuzk_resident(uint32_t d, size_t count) : device(d), n(count) {}
    virtual ~cuzk_resident() {}
    virtual void msm(const void* scalars, size_t n, void* out) = 0;
    // As msm, with the scalars already in this device's memory (Montgomery form).
    virtual void msm_device(const void* d_scalars, size_t n, void* out) = 0;
    // The MSM of the first n bases with scalars split by value: 1 where bit k % 32 of
    // bitmap[k / 32] is set, tail[j] at index tail_idx[j] (< n, checked), 0 elsewhere. The
    // tail runs `chunk` points at a time. Fills timing's upload (the bitmap), compute (the
    // ones' sum) and msm (the tail) intervals.
    virtual void split_msm(const uint32_t* bitmap, size_t n, const uint32_t* tail_idx,
                           const void* tail, size_t ntail, size_t chunk, void* out,
                           cuzk_timing_t* timing) = 0;
};

#endif
