// Device enumeration and the functions common to both groups.
#include "common.cuh"

extern "C" void cuzk_cuda_free_message(char* message)
{
    free(message);
}

extern "C" cuzk_status_t cuzk_cuda_device_count(uint32_t* count)
{
    return cuzk::guarded([&] {
        cuzk::require(count != nullptr, "null output");
        *count = (uint32_t)ngpus();
    });
}

extern "C" cuzk_status_t cuzk_cuda_device_info(uint32_t device, cuzk_device_info_t* info)
{
    return cuzk::guarded([&] {
        cuzk::require(info != nullptr, "null output");
        const gpu_t& gpu = cuzk::select(device);
        const cudaDeviceProp& p = gpu.props();
        memset(info, 0, sizeof(*info));
        info->cuda_ordinal = gpu.cid();
        info->pci_domain = (uint32_t)p.pciDomainID;
        info->pci_bus = (uint32_t)p.pciBusID;
        info->pci_device = (uint32_t)p.pciDeviceID;
        info->major = p.major;
        info->minor = p.minor;
        info->sm_count = p.multiProcessorCount;
        memcpy(info->name, p.name, std::min(sizeof(info->name), sizeof(p.name)) - 1);
        size_t free_b = 0, total_b = 0;
        CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
        info->free_bytes = free_b;
        info->total_bytes = total_b;
    });
}

extern "C" cuzk_status_t cuzk_cuda_mem_info(uint32_t device, uint64_t* free_bytes,
                                            uint64_t* total_bytes)
{
    return cuzk::guarded([&] {
        cuzk::require(free_bytes != nullptr && total_bytes != nullptr, "null output");
        cuzk::select(device);
        size_t f = 0, t = 0;
        CUDA_OK(cudaMemGetInfo(&f, &t));
        *free_bytes = f;
        *total_bytes = t;
    });
}

extern "C" cuzk_status_t cuzk_cuda_trim(uint32_t device)
{
    return cuzk::guarded([&] {
        const gpu_t& gpu = cuzk::select(device);
        gpu.sync();
        cudaMemPool_t pool;
        CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, gpu.cid()));
        CUDA_OK(cudaMemPoolTrimTo(pool, 0));
    });
}

extern "C" cuzk_status_t cuzk_cuda_resident_msm(cuzk_resident_t* resident, const void* scalars,
                                                size_t n, void* out)
{
    return cuzk::guarded([&] {
        cuzk::require(resident != nullptr && out != nullptr, "null argument");
        cuzk::require(n <= resident->n, "more scalars than resident bases");
        cuzk::require(n == 0 || scalars != nullptr, "null scalars");
        cuzk::select(resident->device);
        resident->msm(scalars, n, out);
    });
}

extern "C" cuzk_status_t cuzk_cuda_resident_split_msm(cuzk_resident_t* resident,
                                                      const uint32_t* bitmap, size_t n,
                                                      const uint32_t* tail_idx,
                                                      const void* tail, size_t ntail,
                                                      size_t chunk, void* out,
                                                      cuzk_timing_t* timing)
{
    return cuzk::guarded([&] {
        cuzk::require(resident != nullptr && out != nullptr && timing != nullptr,
                      "null argument");
        cuzk::require(n > 0 && bitmap != nullptr, "no scalars");
        cuzk::require(n <= resident->n, "more scalars than resident bases");
        cuzk::require(n <= UINT32_MAX, "a split MSM covers at most 2^32 - 1 points");
        cuzk::require(ntail == 0 || (tail_idx != nullptr && tail != nullptr), "null tail");
        cuzk::require(ntail <= n, "a longer tail than scalars");
        cuzk::require(chunk > 0, "tail chunk of 0 points");
        cuzk::select(resident->device);
        resident->split_msm(bitmap, n, tail_idx, tail, ntail, chunk, out, timing);
    });
}

extern "C" cuzk_status_t cuzk_cuda_buffer_new(uint32_t device, size_t bytes,
                                              cuzk_buffer_t** out)
{
    return cuzk::guarded([&] {
        cuzk::require(out != nullptr, "null output");
        cuzk::require(bytes > 0, "empty buffer");
        *out = nullptr;
        cuzk::select(device);
        void* ptr = nullptr;
        CUDA_OK(cudaMalloc(&ptr, bytes));
        *out = new cuzk_buffer{device, bytes, ptr};
    });
}

extern "C" cuzk_status_t cuzk_cuda_buffer_upload(cuzk_buffer_t* buffer, const void* host,
                                                 size_t bytes, float* ms)
{
    return cuzk::guarded([&] {
        cuzk::require(buffer != nullptr && host != nullptr && ms != nullptr, "null argument");
        cuzk::require(bytes <= buffer->bytes, "more bytes than the buffer holds");
        const gpu_t& gpu = cuzk::select(buffer->device);
        stream_t& s = gpu[0];
        cuzk::call_clock clk;
        clk.mark(s);
        CUDA_OK(cudaMemcpyAsync(buffer->ptr, host, bytes, cudaMemcpyHostToDevice, s));
        cudaEvent_t done = clk.mark(s);
        *ms = clk.at(done);
    });
}

extern "C" void cuzk_cuda_buffer_free(cuzk_buffer_t* buffer)
{
    if (buffer == nullptr)
        return;
    try {
        cuzk::select(buffer->device);
        // A broken context fails the free; its memory goes with the context.
        (void)cudaFree(buffer->ptr);
    } catch (...) {
    }
    delete buffer;
}

extern "C" void cuzk_cuda_resident_free(cuzk_resident_t* resident)
{
    if (resident == nullptr)
        return;
    try {
        cuzk::select(resident->device);
    } catch (...) {
        // A device that cannot even be selected is broken: leave the copy allocated.
        return;
    }
    cuzk::destroy_if_device_ok{}(resident);
}

// Test only: a kernel that writes to an address no allocation has, leaving the device's
// context with a sticky error, as a failing GPU does. For fault-containment tests.
__global__ void cuzk_fault_kernel(int* p)
{
    *p = 1;
}

extern "C" cuzk_status_t cuzk_cuda_test_fault(uint32_t device)
{
    return cuzk::guarded([&] {
        cuzk::select(device);
        cuzk_fault_kernel<<<1, 1>>>(reinterpret_cast<int*>(0x10));
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaDeviceSynchronize());
    });
}

// A failed registration (memory already registered, say) is not sticky, but it stays this
// thread's last error until read, and the next kernel launch's check on the thread would
// report it: read it here, then throw.
static void check_clearing(cudaError_t e)
{
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        CUDA_OK(e);
    }
}

extern "C" cuzk_status_t cuzk_cuda_host_register(void* ptr, size_t bytes)
{
    return cuzk::guarded([&] {
        cuzk::require(ptr != nullptr && bytes > 0, "nothing to register");
        check_clearing(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable));
    });
}

extern "C" cuzk_status_t cuzk_cuda_host_unregister(void* ptr)
{
    return cuzk::guarded([&] {
        cuzk::require(ptr != nullptr, "nothing to unregister");
        check_clearing(cudaHostUnregister(ptr));
    });
}
