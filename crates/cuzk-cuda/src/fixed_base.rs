//! Fixed-base multiplications on the GPU, for parameter generation: every scalar times the
//! generator of G1 or G2. The window table is built on the host (the same table the CPU
//! path uses) and uploaded once; the scalars stream through the device in chunks sized to
//! the budget, each chunk's affine results copied straight into the output.

use blstrs::{G1Projective, G2Projective, Scalar};
use cuzk_groth16::{window_bits, window_table_g1, window_table_g2, G1Base, G2Base, SCALAR_BITS};
use group::Group as _;

use crate::device::Held;
use crate::error::CudaError;
use crate::ffi;
use crate::vram;

/// Points a chunk holds at most: 2^24 scalars and results are 2 GiB of G1, 3.5 GiB of G2.
const MAX_CHUNK: u64 = 1 << 24;

/// The C entry point of one group.
type Entry = unsafe extern "C" fn(
    u32,
    *const std::ffi::c_void,
    u32,
    u32,
    *const std::ffi::c_void,
    usize,
    usize,
    *mut std::ffi::c_void,
) -> ffi::Status;

/// One group's kernel entry point, device sizes and window table.
struct Kernel<B> {
    what: &'static str,
    entry: Entry,
    sizes: vram::Group,
    /// The generator's table for c-bit windows (the CPU path's own).
    table: fn(usize) -> Vec<B>,
}

const G1: Kernel<G1Base> = Kernel {
    what: "G1 fixed-base multiplication",
    entry: ffi::cuzk_cuda_fixed_base_g1,
    sizes: vram::G1,
    table: |c| window_table_g1(G1Projective::generator(), c),
};

const G2: Kernel<G2Base> = Kernel {
    what: "G2 fixed-base multiplication",
    entry: ffi::cuzk_cuda_fixed_base_g2,
    sizes: vram::G2,
    table: |c| window_table_g2(G2Projective::generator(), c),
};

/// `scalars[i]` times `kernel`'s generator, affine, for every `i`: the table is built on the
/// host and uploaded with the first chunk; the table and one chunk are reserved from the
/// budget first.
fn run<B: Copy + Default>(
    held: Held<'_>,
    kernel: &Kernel<B>,
    scalars: &[Scalar],
) -> Result<Vec<B>, CudaError> {
    let mut out = vec![B::default(); scalars.len()];
    if scalars.is_empty() {
        return Ok(out);
    }
    let c = window_bits(scalars.len());
    let table = (kernel.table)(c);
    let points = table.len() as u64;
    let max = (scalars.len() as u64).min(MAX_CHUNK);
    // The largest chunk the budget has room for now; at least one point, so that a budget
    // without room is refused by the reservation with its own error.
    let chunk = vram::fixed_base_chunk(points, held.available(), max, kernel.sizes).max(1);
    let _mem = held.alloc(kernel.what, vram::fixed_base(points, chunk, kernel.sizes))?;
    let windows = SCALAR_BITS.div_ceil(c);
    // SAFETY: `table` holds windows * (2^c - 1) points and `scalars`/`out` n entries each, in
    // the blst layouts the C side reads and writes (Montgomery Fr, blst affine points); the
    // C side checks the window shape and copies at most n results into `out`.
    let status = unsafe {
        (kernel.entry)(
            held.index(),
            table.as_ptr().cast(),
            c as u32,
            windows as u32,
            scalars.as_ptr().cast(),
            scalars.len(),
            chunk as usize,
            out.as_mut_ptr().cast(),
        )
    };
    ffi::check(status, kernel.what)?;
    Ok(out)
}

/// `scalars[i]` times the generator of G1, affine, for every `i`.
pub(crate) fn g1(held: Held<'_>, scalars: &[Scalar]) -> Result<Vec<G1Base>, CudaError> {
    run(held, &G1, scalars)
}

/// `scalars[i]` times the generator of G2, affine, for every `i`.
pub(crate) fn g2(held: Held<'_>, scalars: &[Scalar]) -> Result<Vec<G2Base>, CudaError> {
    run(held, &G2, scalars)
}
