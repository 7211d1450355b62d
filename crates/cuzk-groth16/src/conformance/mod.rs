//! The backend conformance suite: one set of checks every [`ProvingBackend`] must pass.
//!
//! Each check compares the candidate backend with an oracle: a naive computation where the
//! size allows it (the DFT by its definition, an MSM as a sum of scalar multiplications, a
//! proof checked by the verifier), and the CPU backend otherwise. Run against the CPU backend
//! (in this crate's tests) the naive oracles carry the weight; run against a device backend
//! (`cuzk selftest --backend cuda`) every result is also compared with the CPU's.
//!
//! The checks: NTT round trips and equality, forward and inverse; H from a, b, c of awkward
//! lengths; G1 and G2 MSMs over random points and scalars with zero scalars, the scalar
//! `r - 1`, points at infinity and repeated points mixed in; fixed-base multiplications by
//! the generators (parameter generation) with the same scalars and window-edge ones; split
//! MSMs (ones summed apart from a Pippenger tail: [`ProvingBackend::msm_g1_split`]) over the
//! patterns that break them; and whole proofs with fixed
//! `r` and `s`, byte-identical to the reference's, over circuits whose A and B densities
//! have gaps.

use std::time::{Duration, Instant};

use blstrs::{G1Projective, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::assignment::ProvingAssignment;
use crate::backend::{CpuBackend, ProvingBackend};
use crate::device::DeviceGuard;
use crate::fixed_base::{fixed_base_g1, fixed_base_g2};
use crate::generator::generate_insecure_parameters;
use crate::msm::{g1_affine, g1_base, g2_affine, g2_base, G1Base, G2Base};
use crate::pce::Pce;
use crate::prover::synthesize;
use crate::srs::ParameterSource;
use crate::synthetic::SyntheticCircuit;
use crate::verify::PreparedVerifyingKey;

mod split;

/// The smallest log2 domain a proof check runs at: the synthetic circuit needs room for its
/// public inputs and at least one constraint of each density pattern.
pub const MIN_PROOF_LOG: u32 = 5;

/// Sizes the suite runs at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// log2 of the NTT sizes.
    pub ntt_logs: Vec<u32>,
    /// log2 of the H-computation domains (each run at a length just below the power).
    pub h_logs: Vec<u32>,
    /// G1 MSM sizes.
    pub g1_sizes: Vec<usize>,
    /// G2 MSM sizes.
    pub g2_sizes: Vec<usize>,
    /// Fixed-base multiplication sizes (parameter generation), G1 and G2.
    pub fixed_base_sizes: Vec<usize>,
    /// G1 split-MSM sizes (each with every scalar pattern).
    pub split_g1_sizes: Vec<usize>,
    /// G2 split-MSM sizes.
    pub split_g2_sizes: Vec<usize>,
    /// log2 of the domains of the circuits proved end to end.
    pub proof_logs: Vec<u32>,
    /// Largest size checked against the naive oracle.
    pub naive_limit: usize,
    /// Seed of every random input.
    pub seed: u64,
}

impl Config {
    /// Small sizes for test runs on a CPU.
    pub fn quick() -> Self {
        Config {
            ntt_logs: vec![1, 2, 5, 8, 10, 12],
            h_logs: vec![3, 8, 11],
            g1_sizes: vec![1, 2, 3, 33, 200, 1000, 4096],
            g2_sizes: vec![1, 7, 100, 1000],
            fixed_base_sizes: vec![1, 40, 3000],
            split_g1_sizes: vec![1, 2, 33, 1000, 4096],
            split_g2_sizes: vec![1, 7, 1000],
            proof_logs: vec![6, 9],
            naive_limit: 256,
            seed: 1,
        }
    }

    /// The device suite: NTTs 2^10..2^24, MSMs up to 2^22 points (G2 up to 2^18).
    pub fn full() -> Self {
        Config {
            ntt_logs: (10..=24).collect(),
            h_logs: vec![10, 16, 20, 22],
            g1_sizes: vec![1, 2, 3, 33, 200, 1000, 1 << 12, 1 << 16, 1 << 20, 1 << 22],
            g2_sizes: vec![1, 7, 100, 1000, 1 << 12, 1 << 16, 1 << 18],
            fixed_base_sizes: vec![1, 40, 3000, 1 << 16, 1 << 20],
            split_g1_sizes: vec![1, 2, 3, 33, 1000, 1 << 12, 1 << 16, 1 << 20, 1 << 22],
            split_g2_sizes: vec![1, 7, 100, 1000, 1 << 12, 1 << 16, 1 << 18],
            proof_logs: vec![6, 10, 14, 17],
            naive_limit: 256,
            seed: 1,
        }
    }

    /// Whole proofs only, over circuits filling domains of 2^`log` constraints for each of
    /// `logs` (the scale check: insecure parameters are generated on the CPU first, minutes
    /// at 2^24). Each log must be at least [`MIN_PROOF_LOG`].
    pub fn proofs(logs: Vec<u32>) -> Self {
        Config {
            ntt_logs: Vec::new(),
            h_logs: Vec::new(),
            g1_sizes: Vec::new(),
            g2_sizes: Vec::new(),
            fixed_base_sizes: Vec::new(),
            split_g1_sizes: Vec::new(),
            split_g2_sizes: Vec::new(),
            proof_logs: logs,
            ..Config::quick()
        }
    }
}

/// The outcome of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// What was checked, with its size.
    pub name: String,
    /// Whether the candidate agreed with the oracle.
    pub passed: bool,
    /// The oracle used, or what differed.
    pub detail: String,
    /// Time the candidate took.
    pub elapsed: Duration,
}

/// Runs the suite against `candidate`, calling `report` after each check, and returns every
/// check. An error from the candidate is a failed check, not an abort.
pub fn run(
    candidate: &dyn ProvingBackend,
    cfg: &Config,
    report: &mut dyn FnMut(&Check),
) -> Vec<Check> {
    let reference = CpuBackend::new();
    let held = candidate.device().lock();
    let rheld = reference.device().lock();
    let (candidate, reference) = (
        Under {
            backend: candidate,
            guard: &held,
        },
        Under {
            backend: &reference,
            guard: &rheld,
        },
    );
    let mut rng = ChaCha20Rng::seed_from_u64(cfg.seed);
    let mut checks = Vec::new();
    let mut push = |c: Check| {
        report(&c);
        checks.push(c);
    };

    for &log in &cfg.ntt_logs {
        for c in ntt_checks(candidate, &reference, log, cfg.naive_limit, &mut rng) {
            push(c);
        }
    }
    for &log in &cfg.h_logs {
        push(h_check(candidate, &reference, log, &mut rng));
    }
    for &n in &cfg.g1_sizes {
        push(g1_check(candidate, n, cfg.naive_limit, &mut rng));
    }
    for &n in &cfg.g2_sizes {
        push(g2_check(candidate, n, cfg.naive_limit, &mut rng));
    }
    for &n in &cfg.fixed_base_sizes {
        push(fixed_base_check(
            candidate,
            reference,
            n,
            cfg.naive_limit,
            &mut rng,
        ));
    }
    split::split_checks(
        candidate,
        &cfg.split_g1_sizes,
        &cfg.split_g2_sizes,
        cfg.naive_limit,
        &mut rng,
        &mut push,
    );
    for &log in &cfg.proof_logs {
        push(proof_check(candidate, &reference, log, &mut rng));
    }
    push(foreign_guard_check(candidate, &reference));
    checks
}

/// A backend with the guard of its device held for the suite.
#[derive(Clone, Copy)]
struct Under<'a> {
    backend: &'a dyn ProvingBackend,
    guard: &'a DeviceGuard<'a>,
}

impl Under<'_> {
    fn ntt(&self, v: &mut [Scalar], inverse: bool) -> crate::Result<()> {
        self.backend.ntt(self.guard, v, inverse)
    }
    fn compute_h(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> crate::Result<Vec<Scalar>> {
        self.backend.compute_h(self.guard, a, b, c)
    }
    fn msm_g1(&self, bases: &[G1Base], s: &[Scalar]) -> crate::Result<G1Projective> {
        self.backend.msm_g1(self.guard, bases, s)
    }
    fn msm_g2(&self, bases: &[G2Base], s: &[Scalar]) -> crate::Result<G2Projective> {
        self.backend.msm_g2(self.guard, bases, s)
    }
    fn prove(
        &self,
        params: &dyn ParameterSource,
        pa: &ProvingAssignment,
        r: Scalar,
        s: Scalar,
    ) -> crate::Result<(crate::Proof, crate::ProveTimings)> {
        self.backend.prove(self.guard, params, pa, r, s)
    }
}

/// Every operation under the guard of another device is refused (before it computes).
fn foreign_guard_check(candidate: Under<'_>, reference: &Under<'_>) -> Check {
    let t = Instant::now();
    let bases = fixed_base_g1(G1Projective::generator(), &[Scalar::ONE]);
    let mut v = vec![Scalar::ONE; 4];
    let refused = [
        candidate.backend.ntt(reference.guard, &mut v, false).err(),
        candidate
            .backend
            .msm_g1(reference.guard, &bases, &[Scalar::ONE])
            .err(),
        candidate
            .backend
            .compute_h(reference.guard, &v, &v, &v)
            .err(),
    ];
    let result = if refused
        .iter()
        .all(|e| matches!(e, Some(crate::Error::WrongDevice { .. })))
    {
        Ok("NTT, G1 MSM and H under another device's guard are refused".into())
    } else {
        Err(format!(
            "an operation under another device's guard was not refused: {refused:?}"
        ))
    };
    outcome("foreign guard refused".into(), t.elapsed(), result)
}

fn outcome(name: String, elapsed: Duration, result: Result<String, String>) -> Check {
    match result {
        Ok(detail) => Check {
            name,
            passed: true,
            detail,
            elapsed,
        },
        Err(detail) => Check {
            name,
            passed: false,
            detail,
            elapsed,
        },
    }
}

fn random_scalars(n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    let seed: u64 = rng.gen();
    (0..n)
        .into_par_iter()
        .map(|i| {
            let mut r = ChaCha20Rng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9e37_79b9));
            Scalar::random(&mut r)
        })
        .collect()
}

fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// The DFT by its definition: `out[k] = sum_j v[j] * w^(jk)`.
fn naive_dft(v: &[Scalar], inverse: bool) -> Vec<Scalar> {
    let n = v.len();
    let w = root_of_unity(n.trailing_zeros(), inverse);
    let n_inv = Scalar::from(n as u64).invert().unwrap_or(Scalar::ONE);
    (0..n)
        .map(|k| {
            let wk = w.pow_vartime([k as u64]);
            let mut acc = Scalar::ZERO;
            let mut x = Scalar::ONE;
            for vj in v {
                acc += *vj * x;
                x *= wk;
            }
            if inverse {
                acc * n_inv
            } else {
                acc
            }
        })
        .collect()
}

/// The primitive `2^log`-th root of unity bellperson's domains use (or its inverse).
fn root_of_unity(log: u32, inverse: bool) -> Scalar {
    use ff::PrimeField;
    let mut w = if inverse {
        Scalar::ROOT_OF_UNITY_INV
    } else {
        Scalar::ROOT_OF_UNITY
    };
    for _ in log..Scalar::S {
        w = w.square();
    }
    w
}

fn ntt_checks(
    candidate: Under<'_>,
    reference: &Under<'_>,
    log: u32,
    naive_limit: usize,
    rng: &mut ChaCha20Rng,
) -> Vec<Check> {
    let n = 1usize << log;
    let input = random_scalars(n, rng);
    let mut out = Vec::new();
    for inverse in [false, true] {
        let dir = if inverse { "inverse" } else { "forward" };
        let mut got = input.clone();
        let t = Instant::now();
        let res = candidate.ntt(&mut got, inverse);
        let elapsed = t.elapsed();
        let result = res.map_err(|e| e.to_string()).and_then(|()| {
            let (want, oracle) = if n <= naive_limit {
                (naive_dft(&input, inverse), "naive DFT")
            } else {
                let mut w = input.clone();
                reference.ntt(&mut w, inverse).map_err(|e| e.to_string())?;
                (w, "CPU backend")
            };
            match first_difference(&got, &want) {
                None => Ok(format!("equal to the {oracle}")),
                Some(i) => Err(format!("differs from the {oracle} at index {i}")),
            }
        });
        out.push(outcome(format!("ntt {dir} 2^{log}"), elapsed, result));
    }
    let mut v = input.clone();
    let t = Instant::now();
    let res = candidate
        .ntt(&mut v, false)
        .and_then(|()| candidate.ntt(&mut v, true));
    let elapsed = t.elapsed();
    let result = res
        .map_err(|e| e.to_string())
        .and_then(|()| match first_difference(&v, &input) {
            None => Ok("inverse(forward(v)) = v".into()),
            Some(i) => Err(format!("round trip differs at index {i}")),
        });
    out.push(outcome(format!("ntt round trip 2^{log}"), elapsed, result));
    out
}

fn h_check(candidate: Under<'_>, reference: &Under<'_>, log: u32, rng: &mut ChaCha20Rng) -> Check {
    // A length just past half the domain, so zero padding is exercised.
    let len = (1usize << (log - 1)) + 3;
    let [a, b, c] = [(); 3].map(|_| random_scalars(len, rng));
    let t = Instant::now();
    let got = candidate.compute_h(&a, &b, &c);
    let elapsed = t.elapsed();
    let result = got.map_err(|e| e.to_string()).and_then(|got| {
        let want = reference.compute_h(&a, &b, &c).map_err(|e| e.to_string())?;
        match first_difference(&got, &want) {
            None => Ok(format!(
                "{} coefficients equal to the CPU backend's",
                got.len()
            )),
            Some(i) => Err(format!("differs from the CPU backend at coefficient {i}")),
        }
    });
    outcome(
        format!("H over 2^{log} from {len} evaluations"),
        elapsed,
        result,
    )
}

/// Scalars with the edge cases mixed in: zeros, ones, r - 1.
fn msm_scalars(n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    let mut s = random_scalars(n, rng);
    for (i, x) in s.iter_mut().enumerate() {
        match i % 11 {
            3 => *x = Scalar::ZERO,
            5 => *x = -Scalar::ONE,
            7 => *x = Scalar::ONE,
            _ => {}
        }
    }
    if n > 0 {
        s[n - 1] = -Scalar::ONE;
    }
    s
}

/// Exponents of the base points: a few zero (points at infinity), a few repeated.
fn point_exponents(n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    let mut e = random_scalars(n, rng);
    for i in 0..n {
        match i % 13 {
            4 => e[i] = Scalar::ZERO,
            9 if i > 0 => e[i] = e[i - 1],
            _ => {}
        }
    }
    e
}

fn g1_check(candidate: Under<'_>, n: usize, naive_limit: usize, rng: &mut ChaCha20Rng) -> Check {
    let bases: Vec<G1Base> = fixed_base_g1(G1Projective::generator(), &point_exponents(n, rng));
    let scalars = msm_scalars(n, rng);
    let t = Instant::now();
    let got = candidate.msm_g1(&bases, &scalars);
    let elapsed = t.elapsed();
    let result = got.map_err(|e| e.to_string()).and_then(|got| {
        let (want, oracle) = if n <= naive_limit {
            let want = bases
                .iter()
                .zip(&scalars)
                .fold(G1Projective::identity(), |acc, (b, s)| {
                    acc + g1_affine(b) * s
                });
            (want, "sum of scalar multiplications")
        } else {
            (
                crate::msm::msm_g1_blst(&bases, &scalars),
                "blst's Pippenger",
            )
        };
        if got.to_affine() == want.to_affine() {
            Ok(format!("equal to {oracle}"))
        } else {
            Err(format!("differs from {oracle}"))
        }
    });
    outcome(format!("G1 MSM over {n} points"), elapsed, result)
}

fn g2_check(candidate: Under<'_>, n: usize, naive_limit: usize, rng: &mut ChaCha20Rng) -> Check {
    let bases: Vec<G2Base> = fixed_base_g2(G2Projective::generator(), &point_exponents(n, rng));
    let scalars = msm_scalars(n, rng);
    let t = Instant::now();
    let got = candidate.msm_g2(&bases, &scalars);
    let elapsed = t.elapsed();
    let result = got.map_err(|e| e.to_string()).and_then(|got| {
        let (want, oracle) = if n <= naive_limit {
            let want = bases
                .iter()
                .zip(&scalars)
                .fold(G2Projective::identity(), |acc, (b, s)| {
                    acc + g2_affine(b) * s
                });
            (want, "sum of scalar multiplications")
        } else {
            (crate::msm::msm_g2(&bases, &scalars), "blst's Pippenger")
        };
        if got.to_affine() == want.to_affine() {
            Ok(format!("equal to {oracle}"))
        } else {
            Err(format!("differs from {oracle}"))
        }
    });
    outcome(format!("G2 MSM over {n} points"), elapsed, result)
}

/// Scalars for fixed-base checks: the MSM edge cases, plus 2, powers of two at window
/// boundaries and a scalar whose every 16-bit window is all ones (the table's last entries).
fn fixed_base_scalars(n: usize, rng: &mut ChaCha20Rng) -> Vec<Scalar> {
    let mut s = msm_scalars(n, rng);
    let all_ones = Scalar::from_u128(u128::MAX) * Scalar::from(2u64).pow_vartime([128])
        + Scalar::from_u128(u128::MAX);
    let special = [
        Scalar::from(2u64),
        Scalar::from(2u64).pow_vartime([16]),
        Scalar::from(2u64).pow_vartime([254]),
        all_ones,
    ];
    for (i, x) in s.iter_mut().enumerate().filter(|(i, _)| i % 11 == 9) {
        *x = special[(i / 11) % special.len()];
    }
    s
}

/// Fixed-base multiplications by the generators of G1 and G2, against the scalar
/// multiplications one by one (small sizes) or the CPU's table method.
fn fixed_base_check(
    candidate: Under<'_>,
    reference: Under<'_>,
    n: usize,
    naive_limit: usize,
    rng: &mut ChaCha20Rng,
) -> Check {
    let scalars = fixed_base_scalars(n, rng);
    let t = Instant::now();
    let got = candidate
        .backend
        .fixed_base_g1(candidate.guard, &scalars)
        .and_then(|g1| {
            Ok((
                g1,
                candidate.backend.fixed_base_g2(candidate.guard, &scalars)?,
            ))
        });
    let elapsed = t.elapsed();
    let result = got.map_err(|e| e.to_string()).and_then(|(g1, g2)| {
        let (w1, w2, oracle) = if n <= naive_limit {
            let (p1, p2) = (G1Projective::generator(), G2Projective::generator());
            (
                scalars
                    .iter()
                    .map(|s| g1_base(&(p1 * s).to_affine()))
                    .collect(),
                scalars
                    .iter()
                    .map(|s| g2_base(&(p2 * s).to_affine()))
                    .collect(),
                "scalar multiplications one by one",
            )
        } else {
            (
                reference
                    .backend
                    .fixed_base_g1(reference.guard, &scalars)
                    .map_err(|e| e.to_string())?,
                reference
                    .backend
                    .fixed_base_g2(reference.guard, &scalars)
                    .map_err(|e| e.to_string())?,
                "the CPU backend",
            )
        };
        match (first_difference(&g1, &w1), first_difference(&g2, &w2)) {
            (None, None) => Ok(format!("G1 and G2 equal to {oracle}")),
            (Some(i), _) => Err(format!("G1 entry {i} differs from {oracle}")),
            (_, Some(i)) => Err(format!("G2 entry {i} differs from {oracle}")),
        }
    });
    outcome(
        format!("fixed-base G1 and G2 over {n} scalars"),
        elapsed,
        result,
    )
}

fn proof_check(
    candidate: Under<'_>,
    reference: &Under<'_>,
    log: u32,
    rng: &mut ChaCha20Rng,
) -> Check {
    let name = format!("proof over 2^{log} constraints");
    if log < MIN_PROOF_LOG {
        return outcome(
            name,
            Duration::ZERO,
            Err(format!(
                "proof checks start at 2^{MIN_PROOF_LOG} constraints"
            )),
        );
    }
    let circuit = SyntheticCircuit::filling_domain(log, rng.gen());
    let setup_started = Instant::now();
    let setup = (|| {
        let pce = Pce::extract("conformance", circuit).map_err(|e| e.to_string())?;
        let params = generate_insecure_parameters(&pce, &mut *rng).map_err(|e| e.to_string())?;
        let pa = synthesize(&pce, vec![circuit])
            .map_err(|e| e.to_string())?
            .pop()
            .ok_or("no assignment")?;
        Ok::<_, String>((params, pa))
    })();
    let (params, pa) = match setup {
        Ok(x) => x,
        Err(e) => return outcome(name, Duration::ZERO, Err(format!("setup failed: {e}"))),
    };
    let setup_secs = setup_started.elapsed().as_secs_f64();
    let d = &pa.density;
    let gaps = d.a_aux.count() < d.a_aux.len() && d.b_aux.count() < d.b_aux.len();
    let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
    let t = Instant::now();
    let got = candidate.prove(&params, &pa, r, s);
    let elapsed = t.elapsed();
    let result = got.map_err(|e| e.to_string()).and_then(|(got, _)| {
        let (want, _) = reference
            .prove(&params, &pa, r, s)
            .map_err(|e| e.to_string())?;
        if got.to_bytes() != want.to_bytes() {
            return Err("proof bytes differ from the CPU backend's".into());
        }
        let pvk = PreparedVerifyingKey::new(&params.vk);
        match pvk.verify(&got, &pa.witness.inputs[1..]) {
            Ok(true) => Ok(format!(
                "byte-identical to the CPU backend's and verifies (density gaps: {gaps}; \
                 setup {setup_secs:.1} s)"
            )),
            Ok(false) => Err("the proof does not verify".into()),
            Err(e) => Err(format!("verification error: {e}")),
        }
    });
    outcome(name, elapsed, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_backend_passes_the_quick_suite() {
        let checks = run(&CpuBackend::new(), &Config::quick(), &mut |_| {});
        let failed: Vec<_> = checks.iter().filter(|c| !c.passed).collect();
        assert!(failed.is_empty(), "failed: {failed:#?}");
        assert!(checks.len() > 20);
        assert!(checks.iter().any(|c| c.detail.contains("naive DFT")));
        assert!(checks
            .iter()
            .any(|c| c.detail.contains("density gaps: true")));
    }

    #[test]
    fn the_proofs_config_runs_only_proof_checks() {
        let checks = run(&CpuBackend::new(), &Config::proofs(vec![5, 7]), &mut |_| {});
        let names: Vec<_> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        assert_eq!(names[0], "proof over 2^5 constraints");
        assert_eq!(names[1], "proof over 2^7 constraints");
        assert!(checks.iter().all(|c| c.passed), "{checks:#?}");
        assert!(checks[0].detail.contains("byte-identical"));

        let small = run(&CpuBackend::new(), &Config::proofs(vec![2]), &mut |_| {});
        assert!(!small[0].passed, "{small:#?}");
        assert!(small[0].detail.contains("start at 2^5"), "{small:#?}");
    }

    /// A backend that gets one thing wrong must fail the suite: the checks can fail.
    #[test]
    fn a_wrong_backend_fails() {
        #[derive(Debug)]
        struct OffByOne(CpuBackend);
        impl ProvingBackend for OffByOne {
            fn name(&self) -> String {
                "off-by-one".into()
            }
            fn device(&self) -> &std::sync::Arc<crate::Device> {
                self.0.device()
            }
            fn compute_h(
                &self,
                g: &DeviceGuard<'_>,
                a: &[Scalar],
                b: &[Scalar],
                c: &[Scalar],
            ) -> crate::Result<Vec<Scalar>> {
                self.0.compute_h(g, a, b, c)
            }
            fn ntt(
                &self,
                g: &DeviceGuard<'_>,
                v: &mut [Scalar],
                inverse: bool,
            ) -> crate::Result<()> {
                self.0.ntt(g, v, inverse)
            }
            fn msm_g1(
                &self,
                g: &DeviceGuard<'_>,
                bases: &[G1Base],
                s: &[Scalar],
            ) -> crate::Result<G1Projective> {
                // Drops the first term.
                let k = s.len().min(1);
                self.0.msm_g1(g, &bases[k..], &s[k..])
            }
            fn msm_g2(
                &self,
                g: &DeviceGuard<'_>,
                bases: &[G2Base],
                s: &[Scalar],
            ) -> crate::Result<G2Projective> {
                self.0.msm_g2(g, bases, s)
            }
            fn msm_g1_split(
                &self,
                g: &DeviceGuard<'_>,
                bases: &[G1Base],
                s: &crate::SplitScalars,
            ) -> crate::Result<G1Projective> {
                // Sums the ones and forgets the tail.
                let ones: Vec<Scalar> = s
                    .to_dense()
                    .into_iter()
                    .map(|x| if x == Scalar::ONE { x } else { Scalar::ZERO })
                    .collect();
                self.0.msm_g1(g, &bases[..ones.len()], &ones)
            }
            fn fixed_base_g2(
                &self,
                g: &DeviceGuard<'_>,
                s: &[Scalar],
            ) -> crate::Result<Vec<G2Base>> {
                // Swaps the first two results.
                let mut out = self.0.fixed_base_g2(g, s)?;
                if out.len() > 1 {
                    out.swap(0, 1);
                }
                Ok(out)
            }
        }
        let cfg = Config {
            ntt_logs: vec![3],
            h_logs: vec![],
            g1_sizes: vec![5, 300],
            g2_sizes: vec![],
            fixed_base_sizes: vec![1, 40, 300],
            split_g1_sizes: vec![300],
            split_g2_sizes: vec![],
            proof_logs: vec![6],
            naive_limit: 256,
            seed: 2,
        };
        let checks = run(&OffByOne(CpuBackend::new()), &cfg, &mut |_| {});
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            failed,
            [
                "G1 MSM over 5 points",
                "G1 MSM over 300 points",
                "fixed-base G1 and G2 over 40 scalars",
                "fixed-base G1 and G2 over 300 scalars",
                "G1 split MSM over 300 points, r-1",
                "G1 split MSM over 300 points, witness mix",
                "G1 split MSM over 300 points, random",
                "proof over 2^6 constraints"
            ]
        );
    }
}
