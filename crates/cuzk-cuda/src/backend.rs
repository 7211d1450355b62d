//! [`CudaBackend`]: the backend trait on one GPU.
//!
//! Every operation takes the guard of the GPU's one device object, checks it is that GPU's,
//! and reserves its device memory against the budget before calling into CUDA. A proof runs
//! under one guard; at its yield points ([`YieldPoint`]) a scheduler may run more urgent work
//! under the same guard, since between operations the proof holds no working memory. Its
//! MSMs run over resident parameters when the budget has room for them
//! ([`Residency::Auto`]), streaming the bases from host memory otherwise.

use crate::timeline::Recorder;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use blstrs::{G1Projective, G2Projective, Scalar};
use cuzk_groth16::{
    prove_with, Device, DeviceGuard, DeviceTimeline, Domain, G1Base, G1Query, G2Base,
    ParameterSource, Proof, ProveTimings, ProvingAssignment, ProvingBackend, QueryMsm,
    SplitScalars, VramReservation, YieldPoint,
};
use ff::{Field, PrimeField};
use group::Group;

use crate::device::{CudaDevice, Held};
use crate::error::CudaError;
use crate::ffi;
use crate::resident::ResidentSrs;
use crate::streamed::{Pieces, StreamedMsm};
use crate::vram;

// The FFI passes blstrs scalars and points as blst's C structs.
const _: () = assert!(size_of::<Scalar>() == 32);
const _: () = assert!(size_of::<G1Base>() == 96);
const _: () = assert!(size_of::<G2Base>() == 192);
const _: () = assert!(size_of::<G1Projective>() == 144);
const _: () = assert!(size_of::<G2Projective>() == 288);

/// Whether parameters are kept on the device between proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Residency {
    /// Upload a circuit's parameters on its first proof when the budget has room for them
    /// beside one proof's working memory (evicting the least recently used copies that are
    /// not in use); otherwise stream them from host memory.
    #[default]
    Auto,
    /// Always stream the bases from host memory.
    Never,
}

/// A resident copy, as reported in status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResidentInfo {
    /// The parameters' [`ParameterSource::source_id`].
    pub source_id: u64,
    /// Device memory reserved for the copy.
    pub bytes: u64,
    /// How long the upload took.
    pub upload_time: Duration,
}

#[derive(Debug, Default)]
struct Cache {
    entries: Vec<(Arc<ResidentSrs>, u64)>,
    tick: u64,
}

/// The CUDA backend on one device.
#[derive(Debug)]
pub struct CudaBackend {
    device: Arc<CudaDevice>,
    residency: Residency,
    cache: Mutex<Cache>,
    _runtime: VramReservation,
    /// Test only: proofs until one first faults the device; 0: none armed (see
    /// [`CudaBackend::inject_fault_at`]).
    fault_in: AtomicU64,
}

/// How a proof's MSMs ran (for logs and benchmarks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmPlacement {
    /// Over parameters resident on the device.
    Resident,
    /// With the bases streamed from host memory.
    Streamed,
}

impl CudaBackend {
    /// A backend on `device`. Reserves the runtime's own overhead from the budget for the
    /// backend's lifetime.
    pub fn new(device: Arc<CudaDevice>, residency: Residency) -> Result<Self, CudaError> {
        let g = device.lock();
        let runtime = device
            .held(&g)?
            .alloc("CUDA runtime and NTT tables", vram::RUNTIME_OVERHEAD)?;
        drop(g);
        Ok(CudaBackend {
            device,
            residency,
            cache: Mutex::new(Cache::default()),
            _runtime: runtime,
            fault_in: AtomicU64::new(0),
        })
    }

    /// Test only: the next proof on this backend launches a kernel that faults the device
    /// (an illegal address) before anything else, leaving its CUDA context broken, as a
    /// failing GPU does. For fault-containment tests on real hardware.
    pub fn inject_fault(&self) {
        self.inject_fault_at(1);
    }

    /// Test only: as [`CudaBackend::inject_fault`], for the `n`th proof from now (a fault
    /// drill on a running daemon); 0 disarms.
    pub fn inject_fault_at(&self, n: u64) {
        self.fault_in.store(n, Ordering::SeqCst);
    }

    /// Whether this proof is the armed one (counting it down).
    fn fault_due(&self) -> bool {
        self.fault_in
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok_and(|n| n == 1)
    }

    fn fault_now(&self, g: Held<'_>) -> Result<(), CudaError> {
        // SAFETY: the index came from enumeration; the C side checks it and returns the
        // kernel's CUDA error as a status.
        ffi::check(
            unsafe { ffi::cuzk_cuda_test_fault(g.index()) },
            "injected fault",
        )
    }

    /// The GPU.
    pub fn cuda_device(&self) -> &Arc<CudaDevice> {
        &self.device
    }

    /// The resident copies now on the device.
    pub fn resident(&self) -> Vec<ResidentInfo> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entries
            .iter()
            .map(|(r, _)| ResidentInfo {
                source_id: r.source_id,
                bytes: r.bytes(),
                upload_time: r.upload_time,
            })
            .collect()
    }

    /// Drops every resident copy not in use by a proof; returns the bytes freed. Waits for
    /// the device's lock (for a proof running now to end).
    pub fn evict_resident(&self) -> u64 {
        let _g = self.device.lock();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut freed = 0;
        cache.entries.retain(|(r, _)| {
            let drop_it = Arc::strong_count(r) == 1;
            if drop_it {
                freed += r.bytes();
            }
            !drop_it
        });
        freed
    }

    /// Forward or inverse NTT with its kernel time (CUDA events, transfers excluded).
    pub fn ntt_timed(
        &self,
        guard: &DeviceGuard<'_>,
        values: &mut [Scalar],
        inverse: bool,
    ) -> Result<f32, CudaError> {
        let g = self.device.held(guard)?;
        let n = values.len();
        if !n.is_power_of_two() || n < 2 {
            return Err(CudaError::BadArgument(format!(
                "NTT length {n} is not a power of two >= 2"
            )));
        }
        let _mem = g.alloc("NTT", vram::ntt(n as u64))?;
        let mut ms = 0f32;
        // SAFETY: `values` is a live, exclusively borrowed slice of n Montgomery-form Fr
        // (transparent blst_fr); the C side reads and writes exactly n elements.
        let status = unsafe {
            ffi::cuzk_cuda_ntt(
                g.index(),
                values.as_mut_ptr().cast(),
                n.trailing_zeros(),
                inverse as i32,
                &mut ms,
            )
        };
        ffi::check(status, "NTT")?;
        Ok(ms)
    }

    /// H with its kernel time (CUDA events, transfers excluded).
    pub fn compute_h_timed(
        &self,
        guard: &DeviceGuard<'_>,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> Result<(Vec<Scalar>, f32), CudaError> {
        self.compute_h_held(self.device.held(guard)?, a, b, c)
    }

    fn compute_h_held(
        &self,
        g: Held<'_>,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> Result<(Vec<Scalar>, f32), CudaError> {
        if a.len() != b.len() || a.len() != c.len() {
            return Err(CudaError::BadArgument(format!(
                "a, b, c have {}, {}, {} entries",
                a.len(),
                b.len(),
                c.len()
            )));
        }
        let (lg_n, z_inv) = h_domain(a.len())?;
        let n = 1usize << lg_n;
        let _mem = g.alloc("H polynomial", vram::compute_h(n as u64))?;
        let mut h = vec![Scalar::ZERO; n - 1];
        let mut ms = 0f32;
        // SAFETY: a, b, c are live slices of `len` Fr each; h has room for n - 1; z_inv is
        // one Fr; all Montgomery-form blst_fr layouts.
        let status = unsafe {
            ffi::cuzk_cuda_compute_h(
                g.index(),
                a.as_ptr().cast(),
                b.as_ptr().cast(),
                c.as_ptr().cast(),
                a.len(),
                lg_n,
                (&z_inv as *const Scalar).cast(),
                h.as_mut_ptr().cast(),
                &mut ms,
            )
        };
        ffi::check(status, "H polynomial")?;
        Ok((h, ms))
    }

    pub(crate) fn msm_g1_held(
        &self,
        g: Held<'_>,
        bases: &[G1Base],
        scalars: &[Scalar],
    ) -> Result<G1Projective, CudaError> {
        equal_len(bases.len(), scalars.len())?;
        let mut out = G1Projective::identity();
        if scalars.is_empty() {
            return Ok(out);
        }
        let sm = self.device.info().sm_count as u64;
        let _mem = g.alloc(
            "G1 MSM",
            vram::msm_streamed(bases.len() as u64, vram::G1, sm),
        )?;
        // SAFETY: bases and scalars are live slices of equal length n in blst layouts; out
        // is a blst_p1 (G1Projective is transparent over it).
        let status = unsafe {
            ffi::cuzk_cuda_msm_g1(
                g.index(),
                bases.as_ptr().cast(),
                scalars.as_ptr().cast(),
                scalars.len(),
                (AsMut::<blst::blst_p1>::as_mut(&mut out) as *mut blst::blst_p1).cast(),
            )
        };
        ffi::check(status, "G1 MSM")?;
        Ok(out)
    }

    pub(crate) fn msm_g2_held(
        &self,
        g: Held<'_>,
        bases: &[G2Base],
        scalars: &[Scalar],
    ) -> Result<G2Projective, CudaError> {
        equal_len(bases.len(), scalars.len())?;
        let mut out = G2Projective::identity();
        if scalars.is_empty() {
            return Ok(out);
        }
        let sm = self.device.info().sm_count as u64;
        let _mem = g.alloc(
            "G2 MSM",
            vram::msm_streamed(bases.len() as u64, vram::G2, sm),
        )?;
        // SAFETY: as for G1, with blst_p2_affine bases and a blst_p2 result.
        let status = unsafe {
            ffi::cuzk_cuda_msm_g2(
                g.index(),
                bases.as_ptr().cast(),
                scalars.as_ptr().cast(),
                scalars.len(),
                (AsMut::<blst::blst_p2>::as_mut(&mut out) as *mut blst::blst_p2).cast(),
            )
        };
        ffi::check(status, "G2 MSM")?;
        Ok(out)
    }

    /// The resident copy of `params`, uploading it when the policy and the budget allow;
    /// None means stream.
    fn resident_for(
        &self,
        g: Held<'_>,
        params: &dyn ParameterSource,
        working: u64,
    ) -> Result<Option<Arc<ResidentSrs>>, CudaError> {
        if self.residency == Residency::Never {
            return Ok(None);
        }
        let Some(id) = params.source_id() else {
            return Ok(None);
        };
        if params.h().is_empty()
            || params.l().is_empty()
            || params.a().is_empty()
            || params.b_g1().is_empty()
            || params.b_g2().is_empty()
        {
            return Ok(None);
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.tick += 1;
        let tick = cache.tick;
        if let Some(entry) = cache.entries.iter_mut().find(|(r, _)| r.source_id == id) {
            entry.1 = tick;
            return Ok(Some(entry.0.clone()));
        }
        let needed = ResidentSrs::bytes_needed(params, self.device.info().sm_count as u64);
        if needed + working > self.device.budget() {
            return Ok(None);
        }
        // Evict the least recently used copies not in use until the new one fits.
        while g.available() < needed + working {
            let victim = cache
                .entries
                .iter()
                .enumerate()
                .filter(|(_, (r, _))| Arc::strong_count(r) == 1)
                .min_by_key(|(_, (_, t))| *t)
                .map(|(i, _)| i);
            match victim {
                Some(i) => drop(cache.entries.swap_remove(i)),
                None => return Ok(None),
            }
        }
        let reservation = g.alloc("resident parameters", needed)?;
        let srs = Arc::new(ResidentSrs::upload(g, id, params, reservation)?);
        cache.entries.push((srs.clone(), tick));
        Ok(Some(srs))
    }

    /// A proof under `guard`, and whether its MSMs ran over resident parameters.
    pub fn prove_placed(
        &self,
        guard: &DeviceGuard<'_>,
        params: &dyn ParameterSource,
        pa: &ProvingAssignment,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Proof, ProveTimings, MsmPlacement), cuzk_groth16::Error> {
        self.prove_placed_yielding(guard, params, pa, r, s, &cuzk_groth16::no_yield)
    }

    /// [`prove_placed`](Self::prove_placed) with `yield_point` between the operations, where
    /// this proof holds no working memory on the device; a resident copy in use cannot be
    /// evicted meanwhile.
    pub fn prove_placed_yielding(
        &self,
        guard: &DeviceGuard<'_>,
        params: &dyn ParameterSource,
        pa: &ProvingAssignment,
        r: Scalar,
        s: Scalar,
        yield_point: &YieldPoint<'_>,
    ) -> Result<(Proof, ProveTimings, MsmPlacement), cuzk_groth16::Error> {
        let held = self.device.held(guard)?;
        if self.fault_due() {
            self.fault_now(held)?;
        }
        let n = 1u64 << Domain::log_size_for(pa.a.len())?;
        // One proof's working memory beside resident bases (which include H's a, b and c):
        // H's MSM, or a split MSM with its largest tail chunk.
        let sm = self.device.info().sm_count as u64;
        let working = vram::msm_call(n, n, vram::G1, false).max(vram::split_msm(
            n,
            n.min(1 << 23),
            vram::G2,
            sm,
        ));
        let resident = self.resident_for(held, params, working)?;
        let compute_h = |a: &[Scalar], b: &[Scalar], c: &[Scalar]| {
            Ok(self.compute_h_held(held, a, b, c).map(|(h, _)| h)?)
        };
        match resident {
            Some(res) => {
                let msm = ResidentMsm {
                    held,
                    res: &res,
                    timeline: Recorder::default(),
                };
                let (p, t) = prove_with(&compute_h, &msm, params, pa, r, s, yield_point)?;
                Ok((p, t, MsmPlacement::Resident))
            }
            None => {
                // Pinned once per parameters (and kept while they live), the bases upload at
                // the bus's speed; where they cannot be pinned, through staging copies.
                params.pin_host(&crate::pinned::CudaPinner);
                let msm = StreamedMsm {
                    backend: self,
                    held,
                    params,
                    timeline: Recorder::default(),
                };
                let (p, t) = prove_with(&compute_h, &msm, params, pa, r, s, yield_point)?;
                Ok((p, t, MsmPlacement::Streamed))
            }
        }
    }
}

/// `log2` of the domain H is computed over for `len` evaluations, and `1/Z` on its coset.
pub(crate) fn h_domain(len: usize) -> Result<(u32, Scalar), CudaError> {
    let lg_n = Domain::log_size_for(len).map_err(|e| CudaError::BadArgument(e.to_string()))?;
    let gen = Scalar::MULTIPLICATIVE_GENERATOR;
    let z_inv = Option::<Scalar>::from((gen.pow_vartime([1u64 << lg_n]) - Scalar::ONE).invert())
        .ok_or_else(|| CudaError::BadArgument("coset generator is a root of unity".into()))?;
    Ok((lg_n, z_inv))
}

fn equal_len(bases: usize, scalars: usize) -> Result<(), CudaError> {
    if bases != scalars {
        return Err(CudaError::BadArgument(format!(
            "MSM over {bases} bases with {scalars} scalars"
        )));
    }
    Ok(())
}

/// A proof's MSMs over resident parameters: H fused with its MSM, L, A and B over split
/// scalars, each operation's device timeline recorded.
struct ResidentMsm<'a> {
    held: Held<'a>,
    res: &'a ResidentSrs,
    timeline: Recorder,
}

impl QueryMsm for ResidentMsm<'_> {
    fn g1(&self, query: G1Query, scalars: &[Scalar]) -> cuzk_groth16::Result<G1Projective> {
        Ok(self.res.g1(self.held.guard(), query, scalars)?)
    }
    fn b_g2(&self, scalars: &[Scalar]) -> cuzk_groth16::Result<G2Projective> {
        Ok(self.res.b_g2(self.held.guard(), scalars)?)
    }
    fn takes_split(&self) -> bool {
        true
    }
    fn g1_split(
        &self,
        query: G1Query,
        scalars: &SplitScalars,
    ) -> cuzk_groth16::Result<G1Projective> {
        let (p, span) = self.res.g1_split(self.held, query, scalars)?;
        self.timeline.g1(query, span);
        Ok(p)
    }
    fn b_g2_split(&self, scalars: &SplitScalars) -> cuzk_groth16::Result<G2Projective> {
        let (p, span) = self.res.b_g2_split(self.held, scalars)?;
        self.timeline.b_g2(span);
        Ok(p)
    }
    fn device_timeline(&self) -> Option<DeviceTimeline> {
        Some(self.timeline.get())
    }
    fn h_from_abc(
        &self,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> Option<cuzk_groth16::Result<G1Projective>> {
        let run = || -> Result<G1Projective, CudaError> {
            let (lg_n, z_inv) = h_domain(a.len())?;
            let (p, span) = self.res.h_msm(self.held.guard(), [a, b, c], lg_n, &z_inv)?;
            self.timeline.g1(G1Query::H, span);
            Ok(p)
        };
        Some(run().map_err(Into::into))
    }
}

impl ProvingBackend for CudaBackend {
    fn name(&self) -> String {
        format!("cuda:{}", self.device.info().pci_bus_id)
    }

    fn device(&self) -> &Arc<Device> {
        self.device.hardware()
    }

    fn compute_h(
        &self,
        g: &DeviceGuard<'_>,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> cuzk_groth16::Result<Vec<Scalar>> {
        Ok(self.compute_h_timed(g, a, b, c)?.0)
    }

    fn resident_sources(&self) -> Option<Vec<u64>> {
        Some(self.resident().iter().map(|r| r.source_id).collect())
    }

    fn memory_info(&self) -> Option<(u64, u64)> {
        self.device.mem_info().ok()
    }

    fn host_pinner(&self) -> Option<Arc<dyn cuzk_groth16::HostPinner>> {
        Some(Arc::new(crate::pinned::CudaPinner))
    }

    fn probe(&self, g: &DeviceGuard<'_>) -> cuzk_groth16::Result<()> {
        // A small G1 MSM on the device against the CPU's: a broken context fails the call,
        // a device computing garbage fails the comparison.
        let n = 512u64;
        let exponents: Vec<Scalar> = (0..n).map(|i| Scalar::from(3 * i + 2)).collect();
        let bases: Vec<G1Base> = cuzk_groth16::fixed_base_g1(G1Projective::generator(), &exponents);
        // Full-width scalars: squares of a running product, so every window is exercised.
        let mut x = Scalar::from(0x9e37_79b9_7f4a_7c15u64);
        let scalars: Vec<Scalar> = (0..n)
            .map(|i| {
                x = x.square() + Scalar::from(i + 1);
                x
            })
            .collect();
        let gpu = self.msm_g1(g, &bases, &scalars)?;
        let cpu = cuzk_groth16::CpuBackend::new();
        let want = cpu.msm_g1(&cpu.device().lock(), &bases, &scalars)?;
        if gpu != want {
            return Err(cuzk_groth16::Error::Backend {
                backend: self.name(),
                message: "the probe MSM differs from the CPU's".into(),
            });
        }
        Ok(())
    }

    fn computes_on_host(&self) -> bool {
        // The kernels run on the GPU; the host side (scalar gathering, sppark's final bucket
        // sums) runs on the calling thread and sppark's own pool, never rayon's.
        false
    }

    fn ntt(
        &self,
        g: &DeviceGuard<'_>,
        values: &mut [Scalar],
        inverse: bool,
    ) -> cuzk_groth16::Result<()> {
        self.ntt_timed(g, values, inverse)?;
        Ok(())
    }

    fn msm_g1(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G1Base],
        scalars: &[Scalar],
    ) -> cuzk_groth16::Result<G1Projective> {
        Ok(self.msm_g1_held(self.device.held(g)?, bases, scalars)?)
    }

    fn msm_g2(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G2Base],
        scalars: &[Scalar],
    ) -> cuzk_groth16::Result<G2Projective> {
        Ok(self.msm_g2_held(self.device.held(g)?, bases, scalars)?)
    }

    fn msm_g1_split(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G1Base],
        scalars: &SplitScalars,
    ) -> cuzk_groth16::Result<G1Projective> {
        let bases = cuzk_groth16::split_bases(bases, scalars)?;
        let held = self.device.held(g)?;
        Ok(crate::streamed::split_g1(held, bases, scalars, Pieces::Several)?.0)
    }

    fn msm_g2_split(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G2Base],
        scalars: &SplitScalars,
    ) -> cuzk_groth16::Result<G2Projective> {
        let bases = cuzk_groth16::split_bases(bases, scalars)?;
        let held = self.device.held(g)?;
        Ok(crate::streamed::split_g2(held, bases, scalars, Pieces::Several)?.0)
    }

    fn fixed_base_g1(
        &self,
        g: &DeviceGuard<'_>,
        scalars: &[Scalar],
    ) -> cuzk_groth16::Result<Vec<G1Base>> {
        Ok(crate::fixed_base::g1(self.device.held(g)?, scalars)?)
    }

    fn fixed_base_g2(
        &self,
        g: &DeviceGuard<'_>,
        scalars: &[Scalar],
    ) -> cuzk_groth16::Result<Vec<G2Base>> {
        Ok(crate::fixed_base::g2(self.device.held(g)?, scalars)?)
    }

    fn prove_yielding(
        &self,
        g: &DeviceGuard<'_>,
        params: &dyn ParameterSource,
        assignment: &ProvingAssignment,
        r: Scalar,
        s: Scalar,
        yield_point: &YieldPoint<'_>,
    ) -> cuzk_groth16::Result<(Proof, ProveTimings)> {
        self.prove_placed_yielding(g, params, assignment, r, s, yield_point)
            .map(|(p, t, _)| (p, t))
    }
}
