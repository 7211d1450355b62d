// NTTs and the H polynomial, on sppark's NTT kernels plus one pointwise kernel of ours.
#include "common.cuh"
#include <ff/bls12-381.hpp>
#include <ntt/ntt.cuh>

// a[i] = (a[i] * b[i] - c[i]) * z_inv: the quotient by Z on the coset, where Z is constant.
__global__ void cuzk_h_pointwise(fr_t* a, const fr_t* b, const fr_t* c, const fr_t* z_inv,
                                 size_t n)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    if (i < n) {
        fr_t x = a[i] * b[i];
        x = x - c[i];
        a[i] = x * *z_inv;
    }
}

#ifndef __CUDA_ARCH__

namespace {

// Times the work queued on one stream between start() and stop() with CUDA events.
struct event_timer {
    cudaEvent_t start_ev = nullptr, stop_ev = nullptr;
    cudaStream_t s;
    explicit event_timer(cudaStream_t stream) : s(stream)
    {
        CUDA_OK(cudaEventCreate(&start_ev));
        CUDA_OK(cudaEventCreate(&stop_ev));
    }
    ~event_timer()
    {
        if (start_ev) (void)cudaEventDestroy(start_ev);
        if (stop_ev) (void)cudaEventDestroy(stop_ev);
    }
    void start() { CUDA_OK(cudaEventRecord(start_ev, s)); }
    void stop() { CUDA_OK(cudaEventRecord(stop_ev, s)); }
    float ms()
    {
        float t = 0;
        CUDA_OK(cudaEventSynchronize(stop_ev));
        CUDA_OK(cudaEventElapsedTime(&t, start_ev, stop_ev));
        return t;
    }
};

void check_lg(uint32_t lg_n)
{
    cuzk::require(lg_n >= 1 && lg_n <= MAX_LG_DOMAIN_SIZE, "NTT size out of range");
}

} // namespace

extern "C" cuzk_status_t cuzk_cuda_ntt(uint32_t device, void* inout, uint32_t lg_n, int inverse,
                                       float* gpu_ms)
{
    return cuzk::guarded([&] {
        cuzk::require(inout != nullptr, "null data");
        check_lg(lg_n);
        const gpu_t& gpu = cuzk::select(device);
        stream_t& s = gpu;
        size_t n = (size_t)1 << lg_n;
        dev_ptr_t<fr_t> d{n, s};
        s.HtoD(&d[0], inout, n);
        event_timer t{s};
        t.start();
        NTT::Base_dev_ptr(s, &d[0], lg_n, NTT::InputOutputOrder::NN,
                          inverse ? NTT::Direction::inverse : NTT::Direction::forward,
                          NTT::Type::standard);
        t.stop();
        s.DtoH(static_cast<fr_t*>(inout), &d[0], n);
        s.sync();
        if (gpu_ms) *gpu_ms = t.ms();
    });
}

namespace {

// H into d (3n + 1 elements; H is the first n - 1), queued on s. Returns the kernel time.
float compute_h_on_device(stream_t& s, dev_ptr_t<fr_t>& d, const void* a, const void* b,
                          const void* c, size_t len, uint32_t lg_n, const void* z_inv)
{
    size_t n = (size_t)1 << lg_n;
    fr_t* d_a = &d[0];
    fr_t* d_b = &d[n];
    fr_t* d_c = &d[2 * n];
    fr_t* d_z = &d[3 * n];
    const void* src[3] = {a, b, c};
    fr_t* dst[3] = {d_a, d_b, d_c};
    for (int k = 0; k < 3; k++) {
        if (len) s.HtoD(dst[k], src[k], len);
        if (len < n) s.bzero(dst[k] + len, n - len);
    }
    s.HtoD(d_z, z_inv, 1);
    event_timer t{s};
    t.start();
    // Evaluations over the domain -> coefficients (bit-reversed) -> evaluations over the
    // coset (natural order).
    for (int k = 0; k < 3; k++) {
        NTT::Base_dev_ptr(s, dst[k], lg_n, NTT::InputOutputOrder::NR, NTT::Direction::inverse,
                          NTT::Type::standard);
        NTT::Base_dev_ptr(s, dst[k], lg_n, NTT::InputOutputOrder::RN, NTT::Direction::forward,
                          NTT::Type::coset);
    }
    const unsigned threads = 256;
    cuzk_h_pointwise<<<(unsigned)((n + threads - 1) / threads), threads, 0, s>>>(d_a, d_b, d_c,
                                                                              d_z, n);
    CUDA_OK(cudaGetLastError());
    // Back to coefficients over the coset, natural order.
    NTT::Base_dev_ptr(s, d_a, lg_n, NTT::InputOutputOrder::NN, NTT::Direction::inverse,
                      NTT::Type::coset);
    t.stop();
    return t.ms();
}

void check_h_args(const void* a, const void* b, const void* c, size_t len, uint32_t lg_n,
                  const void* z_inv)
{
    check_lg(lg_n);
    cuzk::require(len <= ((size_t)1 << lg_n), "more evaluations than the domain holds");
    cuzk::require(z_inv != nullptr, "null argument");
    cuzk::require(len == 0 || (a && b && c), "null evaluations");
}

} // namespace

extern "C" cuzk_status_t cuzk_cuda_compute_h(uint32_t device, const void* a, const void* b,
                                             const void* c, size_t len, uint32_t lg_n,
                                             const void* z_inv, void* h, float* gpu_ms)
{
    return cuzk::guarded([&] {
        check_h_args(a, b, c, len, lg_n, z_inv);
        cuzk::require(h != nullptr, "null argument");
        size_t n = (size_t)1 << lg_n;
        const gpu_t& gpu = cuzk::select(device);
        stream_t& s = gpu;
        dev_ptr_t<fr_t> d{3 * n + 1, s};
        float ms = compute_h_on_device(s, d, a, b, c, len, lg_n, z_inv);
        s.DtoH(static_cast<fr_t*>(h), &d[0], n - 1);
        s.sync();
        if (gpu_ms) *gpu_ms = ms;
    });
}

extern "C" cuzk_status_t cuzk_cuda_h_msm_resident(cuzk_resident_t* resident, const void* a,
                                                  const void* b, const void* c, size_t len,
                                                  uint32_t lg_n, const void* z_inv, void* out,
                                                  float* gpu_ms)
{
    return cuzk::guarded([&] {
        check_h_args(a, b, c, len, lg_n, z_inv);
        cuzk::require(resident != nullptr && out != nullptr, "null argument");
        size_t n = (size_t)1 << lg_n;
        cuzk::require(n - 1 <= resident->n, "more H coefficients than resident bases");
        const gpu_t& gpu = cuzk::select(resident->device);
        stream_t& s = gpu;
        dev_ptr_t<fr_t> d{3 * n + 1, s};
        float ms = compute_h_on_device(s, d, a, b, c, len, lg_n, z_inv);
        // The MSM runs on sppark's own streams: H must be complete first.
        s.sync();
        resident->msm_device(&d[0], n - 1, out);
        if (gpu_ms) *gpu_ms = ms;
    });
}

#endif
