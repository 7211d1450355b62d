//! The backend seam: the heavy operations of a Groth16 proof, behind one trait.
//!
//! [`CpuBackend`] is the reference implementation. A device backend implements the same
//! trait; the conformance suite compares every backend's results with the CPU's, and
//! [`ProvingBackend::prove`] may be overridden to keep data resident on the device for the
//! whole proof.
//!
//! Every backend computes on one [`Device`] ([`ProvingBackend::device`]) and every operation
//! takes that device's [`DeviceGuard`]: the caller holds the lock, the backend checks it is
//! the lock of its own device ([`DeviceGuard::check`]) before anything else.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use blstrs::{G1Projective, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::Group;
use rayon::prelude::*;

use crate::assignment::ProvingAssignment;
use crate::device::{Device, DeviceGuard, DeviceInfo};
use crate::domain::{bit_reverse, powers_into, Domain};
use crate::error::{Error, Result};
use crate::field::Fr;
use crate::msm::{self, G1Base, G2Base};
use crate::proof::Proof;
use crate::prover::{ProveTimings, YieldPoint};
use crate::split::SplitScalars;
use crate::srs::ParameterSource;

/// The operations a Groth16 prover needs from the hardware it runs on.
pub trait ProvingBackend: Send + Sync {
    /// A short name for logs and errors ("cpu", "cuda:0000:01:00.0", ...).
    fn name(&self) -> String;

    /// The device this backend computes on: the guard every operation takes is its lock's.
    fn device(&self) -> &Arc<Device>;

    /// The coefficients of `h = (a*b - c) / Z` (`n - 1` of them) from the evaluations of a, b
    /// and c over the domain of size `n >= a.len()` (shorter inputs are zero-padded).
    fn compute_h(
        &self,
        g: &DeviceGuard<'_>,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> Result<Vec<Scalar>>;

    /// Forward (or inverse, scaled by `1/n`) transform of `values` in natural order over the
    /// domain of its length, which must be a power of two.
    fn ntt(&self, g: &DeviceGuard<'_>, values: &mut [Scalar], inverse: bool) -> Result<()>;

    /// `sum scalars[i] * bases[i]` in G1; the slices have equal length.
    fn msm_g1(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G1Base],
        scalars: &[Scalar],
    ) -> Result<G1Projective>;

    /// `sum scalars[i] * bases[i]` in G2; the slices have equal length.
    fn msm_g2(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G2Base],
        scalars: &[Scalar],
    ) -> Result<G2Projective>;

    /// `sum scalars[i] * bases[i]` in G1 with the scalars split by value ([`SplitScalars`]),
    /// as a device backend runs a proof's L, A and B MSMs over its resident bases; `bases`
    /// holds at least `scalars.len()` points. The default runs [`msm_g1`](Self::msm_g1) on
    /// the dense scalars.
    fn msm_g1_split(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G1Base],
        scalars: &SplitScalars,
    ) -> Result<G1Projective> {
        self.msm_g1(g, split_bases(bases, scalars)?, &scalars.to_dense())
    }

    /// As [`msm_g1_split`](Self::msm_g1_split), in G2.
    fn msm_g2_split(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G2Base],
        scalars: &SplitScalars,
    ) -> Result<G2Projective> {
        self.msm_g2(g, split_bases(bases, scalars)?, &scalars.to_dense())
    }

    /// `scalars[i] * G` for the generator `G` of G1 and every `i`, in stored (affine) form
    /// (a zero scalar gives the point at infinity): the fixed-base multiplications that make
    /// most of a parameter set. The default computes on the host's CPU.
    fn fixed_base_g1(&self, g: &DeviceGuard<'_>, scalars: &[Scalar]) -> Result<Vec<G1Base>> {
        g.check(self.device())?;
        Ok(crate::fixed_base::fixed_base_g1(
            G1Projective::generator(),
            scalars,
        ))
    }

    /// As [`fixed_base_g1`](Self::fixed_base_g1), in G2.
    fn fixed_base_g2(&self, g: &DeviceGuard<'_>, scalars: &[Scalar]) -> Result<Vec<G2Base>> {
        g.check(self.device())?;
        Ok(crate::fixed_base::fixed_base_g2(
            G2Projective::generator(),
            scalars,
        ))
    }

    /// The [`ParameterSource::source_id`]s whose points this backend keeps in device memory
    /// now, for status pages; `None` for a backend that proves straight from host memory
    /// (the CPU), where parameters loaded in memory are already as close as they get.
    fn resident_sources(&self) -> Option<Vec<u64>> {
        None
    }

    /// Checks the device answers and computes correctly (a small operation against the
    /// CPU's result), for bringing a quarantined device back; the CPU always passes.
    fn probe(&self, g: &DeviceGuard<'_>) -> Result<()> {
        g.check(self.device())
    }

    /// Pins host memory for this backend's device copies (see [`crate::HostPinner`]);
    /// `None` (the default) for a backend that copies nothing to a device.
    fn host_pinner(&self) -> Option<Arc<dyn crate::HostPinner>> {
        None
    }

    /// Free and total memory of the device as its driver reports them now; `None` for a
    /// backend without device memory (the CPU).
    fn memory_info(&self) -> Option<(u64, u64)> {
        None
    }

    /// Whether its operations compute on the host's CPU threads (the rayon pool they are
    /// called in). A scheduler that pauses its pools for urgent work must account for a proof
    /// on such a backend being paused too. A device backend whose host side is single-threaded returns false.
    fn computes_on_host(&self) -> bool {
        true
    }

    /// A whole proof of one assignment with the given randomness, and where its time went.
    fn prove(
        &self,
        g: &DeviceGuard<'_>,
        params: &dyn ParameterSource,
        assignment: &ProvingAssignment,
        r: Scalar,
        s: Scalar,
    ) -> Result<(Proof, ProveTimings)> {
        self.prove_yielding(g, params, assignment, r, s, &crate::prover::no_yield)
    }

    /// [`prove`](Self::prove), calling `yield_point` between the proof's operations (see
    /// [`YieldPoint`]); the default composes the individual operations.
    fn prove_yielding(
        &self,
        g: &DeviceGuard<'_>,
        params: &dyn ParameterSource,
        assignment: &ProvingAssignment,
        r: Scalar,
        s: Scalar,
        yield_point: &YieldPoint<'_>,
    ) -> Result<(Proof, ProveTimings)> {
        crate::prover::prove_composed(self, g, params, assignment, r, s, yield_point)
    }
}

/// The CPU backend: our NTT on rayon and blst's Pippenger MSM.
#[derive(Debug)]
pub struct CpuBackend {
    device: Arc<Device>,
    domains: Mutex<HashMap<u32, Arc<Domain>>>,
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuBackend {
    /// A CPU backend, on a device of its own named "cpu", with an empty domain cache.
    pub fn new() -> Self {
        Self::on(Device::new(
            DeviceInfo {
                id: "cpu".into(),
                name: "CPU backend".into(),
                memory_total: 0,
                ordinal: None,
            },
            u64::MAX,
        ))
    }

    /// A CPU backend computing under `device`'s lock.
    pub fn on(device: Arc<Device>) -> Self {
        CpuBackend {
            device,
            domains: Mutex::new(HashMap::new()),
        }
    }

    /// The domain of `2^log_n` points, built once and cached (its twiddle table is reused by
    /// every later proof of that size).
    pub fn domain(&self, log_n: u32) -> Result<Arc<Domain>> {
        let mut cache = self.domains.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = cache.get(&log_n) {
            return Ok(d.clone());
        }
        let d = Arc::new(Domain::new(log_n)?);
        cache.insert(log_n, d.clone());
        Ok(d)
    }
}

/// The bases a split MSM runs over: the first `scalars.len()`.
pub fn split_bases<'a, B>(bases: &'a [B], scalars: &SplitScalars) -> Result<&'a [B]> {
    bases.get(..scalars.len()).ok_or_else(|| {
        Error::ParamsMismatch(format!(
            "MSM over {} bases with {} split scalars",
            bases.len(),
            scalars.len()
        ))
    })
}

fn check_equal_len(bases: usize, scalars: usize) -> Result<()> {
    if bases != scalars {
        return Err(Error::ParamsMismatch(format!(
            "MSM over {bases} bases with {scalars} scalars"
        )));
    }
    Ok(())
}

impl ProvingBackend for CpuBackend {
    fn name(&self) -> String {
        "cpu".into()
    }

    fn device(&self) -> &Arc<Device> {
        &self.device
    }

    fn compute_h(
        &self,
        guard: &DeviceGuard<'_>,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
    ) -> Result<Vec<Scalar>> {
        guard.check(&self.device)?;
        if a.len() != b.len() || a.len() != c.len() {
            return Err(Error::LayoutMismatch(format!(
                "a, b, c have {}, {}, {} entries",
                a.len(),
                b.len(),
                c.len()
            )));
        }
        let d = self.domain(Domain::log_size_for(a.len())?)?;
        let n = d.size();
        let log_n = d.log_size();
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let g_inv = g.invert().expect("the generator is nonzero");
        let n_inv = d.n_inv();

        // g^rev(p) = lo_tab[p mod L] * hi_tab[p / L]: two tables of about sqrt(n) entries.
        let lo_bits = log_n / 2;
        let hi_bits = log_n - lo_bits;
        let lo_tab: Vec<Fr> = (0..1usize << lo_bits)
            .into_par_iter()
            .map(|lo| {
                Fr::from_scalar(&g.pow_vartime([(bit_reverse(lo, lo_bits) << hi_bits) as u64]))
            })
            .collect();
        let hi_tab: Vec<Fr> = (0..1usize << hi_bits)
            .into_par_iter()
            .map(|hi| Fr::from_scalar(&(g.pow_vartime([bit_reverse(hi, hi_bits) as u64]) * n_inv)))
            .collect();

        // Evaluations over the domain -> coefficients (bit-reversed) -> evaluations over the
        // coset g*D (natural order).
        let to_coset = |src: &[Scalar]| -> Vec<Fr> {
            let mut v = vec![Fr::ZERO; n];
            v[..src.len()]
                .par_iter_mut()
                .zip(src.par_iter())
                .for_each(|(d, s)| *d = Fr::from_scalar(s));
            d.dif(&mut v, true);
            v.par_chunks_mut(1 << lo_bits)
                .zip(hi_tab.par_iter())
                .for_each(|(chunk, hi)| {
                    for (x, lo) in chunk.iter_mut().zip(&lo_tab) {
                        *x = x.mul(lo.mul(*hi));
                    }
                });
            d.dit(&mut v, false);
            v
        };
        let (mut va, (vb, vc)) = rayon::join(
            || to_coset(a),
            || rayon::join(|| to_coset(b), || to_coset(c)),
        );

        // On the coset Z(x) = x^n - 1 is the constant g^n - 1.
        let z_inv = Fr::from_scalar(
            &(g.pow_vartime([n as u64]) - Scalar::ONE)
                .invert()
                .expect("g is not an n-th root of unity"),
        );
        va.par_iter_mut()
            .zip(vb.par_iter().zip(vc.par_iter()))
            .for_each(|(x, (y, z))| *x = x.mul(*y).sub(*z).mul(z_inv));
        drop((vb, vc));

        // Back to coefficients: bit-reversed out of the DIF, gathered into natural order with
        // the coset shift undone. The top coefficient is zero (deg h <= n - 2) and dropped.
        d.dif(&mut va, true);
        let mut h = vec![Scalar::ZERO; n - 1];
        powers_into(&mut h, g_inv, 0, n_inv);
        h.par_iter_mut().enumerate().for_each(|(i, x)| {
            *x = va[bit_reverse(i, log_n)]
                .mul(Fr::from_scalar(x))
                .to_scalar()
        });
        Ok(h)
    }

    fn ntt(&self, g: &DeviceGuard<'_>, values: &mut [Scalar], inverse: bool) -> Result<()> {
        g.check(&self.device)?;
        if !values.len().is_power_of_two() {
            return Err(Error::LayoutMismatch(format!(
                "NTT length {} is not a power of two",
                values.len()
            )));
        }
        let d = self.domain(values.len().trailing_zeros())?;
        if inverse {
            d.ifft(values);
        } else {
            d.fft(values);
        }
        Ok(())
    }

    fn msm_g1(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G1Base],
        scalars: &[Scalar],
    ) -> Result<G1Projective> {
        g.check(&self.device)?;
        check_equal_len(bases.len(), scalars.len())?;
        Ok(msm::msm_g1(bases, scalars))
    }

    fn msm_g2(
        &self,
        g: &DeviceGuard<'_>,
        bases: &[G2Base],
        scalars: &[Scalar],
    ) -> Result<G2Projective> {
        g.check(&self.device)?;
        check_equal_len(bases.len(), scalars.len())?;
        Ok(msm::msm_g2(bases, scalars))
    }
}
