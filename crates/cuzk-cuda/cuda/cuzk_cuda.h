// The C ABI between cuzk-cuda's Rust wrapper and its CUDA code.
//
// Invariants every function keeps:
// - The device is an explicit argument (an index into sppark's device list, bounds-checked)
//   and is made current on the calling thread before any CUDA call.
// - No C++ exception crosses this boundary: each function catches everything and returns
//   {code, message}; code 0 is success, the message (or NULL) is malloc'd and released with
//   cuzk_cuda_free_message.
// - Field elements are BLS12-381 Fr in Montgomery form (blst_fr, 32 bytes); G1/G2 affine
//   points are blst_p1_affine/blst_p2_affine (96/192 bytes, Montgomery Fp, infinity = all
//   zero); results are Jacobian blst_p1/blst_p2 (144/288 bytes).
#ifndef CUZK_CUDA_H
#define CUZK_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t code;
    char* message;
} cuzk_status_t;

typedef struct {
    int32_t cuda_ordinal;
    uint32_t pci_domain, pci_bus, pci_device;
    int32_t major, minor, sm_count;
    uint64_t total_bytes, free_bytes;
    char name[256];
} cuzk_device_info_t;

// Where one call's time went on the device: intervals in milliseconds from the call's first
// command, from CUDA events (a stage that did not run: start = end = 0).
typedef struct {
    float upload_start, upload_end;    // host-to-device copies
    float compute_start, compute_end;  // H: NTTs and the pointwise step; split MSM: the ones
    float msm_start, msm_end;          // Pippenger: H's MSM; split MSM: the tail
    float wall;                        // the call, first command to last
} cuzk_timing_t;

// Status codes besides CUDA's own (which are returned negated).
#define CUZK_BAD_DEVICE 1
#define CUZK_BAD_ARGUMENT 2
#define CUZK_INTERNAL 3

void cuzk_cuda_free_message(char* message);

cuzk_status_t cuzk_cuda_device_count(uint32_t* count);
cuzk_status_t cuzk_cuda_device_info(uint32_t device, cuzk_device_info_t* info);
cuzk_status_t cuzk_cuda_mem_info(uint32_t device, uint64_t* free_bytes, uint64_t* total_bytes);
// Page-locks (pins) host memory so transfers from it run at full bus speed; the memory must
// stay allocated until unregistered. Not tied to a device.
cuzk_status_t cuzk_cuda_host_register(void* ptr, size_t bytes);
cuzk_status_t cuzk_cuda_host_unregister(void* ptr);
// Returns memory the device's stream-ordered pool keeps after frees to the driver.
cuzk_status_t cuzk_cuda_trim(uint32_t device);

// In-place NTT of 2^lg_n elements in natural order (inverse: scaled by 1/n).
// gpu_ms: kernel time measured with CUDA events (transfers excluded).
cuzk_status_t cuzk_cuda_ntt(uint32_t device, void* inout, uint32_t lg_n, int inverse,
                            float* gpu_ms);
// h = coefficients of (a*b - c)/Z over the domain of 2^lg_n, the top one dropped
// (2^lg_n - 1 of them); a, b, c have len <= 2^lg_n entries (zero-padded). z_inv is
// 1/(g^n - 1) for the coset generator g.
cuzk_status_t cuzk_cuda_compute_h(uint32_t device, const void* a, const void* b, const void* c,
                                  size_t len, uint32_t lg_n, const void* z_inv, void* h,
                                  float* gpu_ms);

cuzk_status_t cuzk_cuda_msm_g1(uint32_t device, const void* bases, const void* scalars,
                               size_t n, void* out);
cuzk_status_t cuzk_cuda_msm_g2(uint32_t device, const void* bases, const void* scalars,
                               size_t n, void* out);

// Device memory allocated once and reused (a proof's working buffers).
typedef struct cuzk_buffer cuzk_buffer_t;
cuzk_status_t cuzk_cuda_buffer_new(uint32_t device, size_t bytes, cuzk_buffer_t** out);
void cuzk_cuda_buffer_free(cuzk_buffer_t* buffer);
// Benchmarks: copies `bytes` of host memory to the buffer's start; ms: the copy's device time.
cuzk_status_t cuzk_cuda_buffer_upload(cuzk_buffer_t* buffer, const void* host, size_t bytes,
                                      float* ms);

// Bases uploaded once and kept on the device until freed.
typedef struct cuzk_resident cuzk_resident_t;
cuzk_status_t cuzk_cuda_resident_g1(uint32_t device, const void* bases, size_t n,
                                    cuzk_resident_t** out);
cuzk_status_t cuzk_cuda_resident_g2(uint32_t device, const void* bases, size_t n,
                                    cuzk_resident_t** out);
// MSM over the first n resident bases (n <= the number uploaded).
cuzk_status_t cuzk_cuda_resident_msm(cuzk_resident_t* resident, const void* scalars, size_t n,
                                     void* out);
// H as cuzk_cuda_compute_h, kept on the resident's device in `work` (at least
// (3 * 2^lg_n + 1) * 32 bytes, on the same device), then its MSM over the resident bases (G1 H
// query): out = sum h[i] * bases[i], a blst_p1. H never leaves the device. a, b and c upload
// on three streams, each polynomial's NTTs starting once its copy is done.
cuzk_status_t cuzk_cuda_h_msm_resident(cuzk_resident_t* resident, cuzk_buffer_t* work,
                                       const void* a, const void* b, const void* c, size_t len,
                                       uint32_t lg_n, const void* z_inv, void* out,
                                       cuzk_timing_t* timing);
// The MSM of the first n resident bases with scalars split by value (see cuzk_resident's
// split_msm): the bases whose bit is set in `bitmap` (n bits, n.div_ceil(32) words) summed by
// batch addition, plus Pippenger over the ntail tail scalars (Montgomery form) and the bases
// at tail_idx, gathered on the device `chunk` at a time. out: blst_p1 or blst_p2.
cuzk_status_t cuzk_cuda_resident_split_msm(cuzk_resident_t* resident, const uint32_t* bitmap,
                                           size_t n, const uint32_t* tail_idx,
                                           const void* tail, size_t ntail, size_t chunk,
                                           void* out, cuzk_timing_t* timing);
// The split MSM of n bases in host memory (blst affine points of the group): as
// cuzk_cuda_resident_split_msm, with the bases uploaded `window` points at a time into two
// device buffers (the next window's upload beside this one's sums) and the tail's bases
// gathered on the device per window. Tail indices must increase (checked).
cuzk_status_t cuzk_cuda_streamed_split_msm_g1(uint32_t device, const void* bases, size_t n,
                                              const uint32_t* bitmap, const uint32_t* tail_idx,
                                              const void* tail, size_t ntail, size_t window,
                                              size_t chunk, void* out, cuzk_timing_t* timing);
cuzk_status_t cuzk_cuda_streamed_split_msm_g2(uint32_t device, const void* bases, size_t n,
                                              const uint32_t* bitmap, const uint32_t* tail_idx,
                                              const void* tail, size_t ntail, size_t window,
                                              size_t chunk, void* out, cuzk_timing_t* timing);
// H from a, b and c (as cuzk_cuda_compute_h) and its MSM over the n - 1 H bases in host
// memory, H kept on the device in between (b and c's memory returned before the MSM).
cuzk_status_t cuzk_cuda_h_msm_streamed(uint32_t device, const void* bases, size_t nbases,
                                       const void* a, const void* b, const void* c, size_t len,
                                       uint32_t lg_n, const void* z_inv, void* out,
                                       cuzk_timing_t* timing);
// Benchmarks: uploads n scalars to the resident's device, then the MSM over them from device
// memory (as H's MSM runs in a proof); msm_ms is the MSM's wall time without the upload.
cuzk_status_t cuzk_cuda_resident_msm_device_scalars(cuzk_resident_t* resident,
                                                    const void* scalars, size_t n, void* out,
                                                    double* msm_ms);
void cuzk_cuda_resident_free(cuzk_resident_t* resident);
// Fixed-base multiplication (parameter generation): out[i] = scalars[i] * G for the n
// scalars, affine (infinity all zero), through the window table of G for c-bit windows
// (entry w * (2^c - 1) + d - 1 is d * 2^(c*w) * G, affine; windows = ceil(255 / c)). The
// device holds the table and `chunk` scalars and results at a time.
cuzk_status_t cuzk_cuda_fixed_base_g1(uint32_t device, const void* table, uint32_t c,
                                      uint32_t windows, const void* scalars, size_t n,
                                      size_t chunk, void* out);
cuzk_status_t cuzk_cuda_fixed_base_g2(uint32_t device, const void* table, uint32_t c,
                                      uint32_t windows, const void* scalars, size_t n,
                                      size_t chunk, void* out);
// Test only: launches a kernel that faults on `device` (an illegal address), leaving its
// context broken, as a failing GPU does; returns the CUDA error.
cuzk_status_t cuzk_cuda_test_fault(uint32_t device);

#ifdef __cplusplus
}
#endif

#endif
