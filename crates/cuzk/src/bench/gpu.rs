//! `cuzk bench gpu`: MSM and NTT kernels on one GPU, each result checked against the CPU once.
//!
//! MSM times are wall-clock around one synchronous call (sppark finishes the bucket sums on
//! the host, so that is part of an MSM); bases are resident on the device and scalars come
//! from host memory (pageable, then pinned) or, for G1, from device memory (copied there
//! before the clock starts, as H's scalars are in a proof). NTT times are CUDA events around the kernels (transfers excluded). Each
//! figure is the median of the timed runs after one warm-up.

use anyhow::ensure;

use crate::backends::{self, BackendArgs, BackendKind};

/// Arguments of `cuzk bench gpu`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// GPU: CUDA ordinal or PCI bus id (default: the first).
    #[arg(long)]
    device: Option<String>,
    /// Timed runs per size (after one warm-up).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// log2 sizes of the G1 MSMs.
    #[arg(long, value_delimiter = ',', default_value = "20,22,24,26")]
    g1: Vec<u32>,
    /// log2 sizes of the G2 MSMs.
    #[arg(long, value_delimiter = ',', default_value = "20,22")]
    g2: Vec<u32>,
    /// log2 sizes of the NTTs.
    #[arg(long, value_delimiter = ',', default_value = "20,21,22,23,24,25,26,27")]
    ntt: Vec<u32>,
    /// Distinct random bases (log2); larger MSMs repeat them.
    #[arg(long, default_value_t = 20)]
    distinct: u32,
    /// Proofs of a 2^16-constraint synthetic circuit to run while watching free VRAM (0: skip).
    #[arg(long, default_value_t = 100)]
    leak_proofs: usize,
    /// log2 sizes of the G1 split MSMs compared side by side with sppark's Pippenger (empty:
    /// none).
    #[arg(long, value_delimiter = ',', default_value = "20,24,26")]
    split: Vec<u32>,
    /// Percent of the witness-mix scalars that are 0 (default: the L query of a 32 GiB PoRep
    /// partition, measured 2026-12-07).
    #[arg(long, default_value_t = 51.4)]
    zeros: f64,
    /// Percent of the witness-mix scalars that are 1 (default: as --zeros).
    #[arg(long, default_value_t = 47.3)]
    ones: f64,
    /// GiB of host memory uploaded from pageable, then pinned memory, with the time to pin it
    /// (0: skip); a 32 GiB PoRep partition's a, b and c are about 4 GiB each.
    #[arg(long, default_value_t = 4)]
    upload_gib: u64,
}

/// Runs the benchmark.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ensure!(args.runs >= 1, "--runs must be at least 1");
    let backend = backends::open_cuda(&BackendArgs {
        backend: BackendKind::Cuda,
        device: args.device.clone(),
        no_resident: false,
        vram_budget: None,
    })
    .map_err(|e| anyhow::anyhow!(e.message))?;
    run_cuda(args, &backend)
}

#[cfg(not(feature = "cuda"))]
fn run_cuda(_args: &Args, _backend: &cuzk_groth16::CpuBackend) -> anyhow::Result<()> {
    anyhow::bail!("built without the cuda feature")
}

#[cfg(feature = "cuda")]
use imp::run_cuda;

#[cfg(feature = "cuda")]
pub(super) mod imp {
    use std::time::{Duration, Instant};

    use anyhow::{ensure, Context};
    use blstrs::{G1Projective, G2Projective, Scalar};
    use cuzk_groth16::{fixed_base_g1, fixed_base_g2, msm, CpuBackend, ProvingBackend};
    use ff::Field;
    use group::{Curve, Group};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use rayon::prelude::*;

    use super::Args;
    use crate::stats::median;

    pub(in crate::bench) fn random_scalars(n: usize, seed: u64) -> Vec<Scalar> {
        (0..n)
            .into_par_iter()
            .chunks(1 << 14)
            .flat_map_iter(|idx| {
                let mut r = ChaCha20Rng::seed_from_u64(seed ^ idx[0] as u64);
                idx.into_iter()
                    .map(|_| Scalar::random(&mut r))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    pub(super) fn tile<T: Copy + Send + Sync>(distinct: &[T], n: usize) -> Vec<T> {
        (0..n)
            .into_par_iter()
            .map(|i| distinct[i % distinct.len()])
            .collect()
    }

    pub(in crate::bench) fn ms(d: Duration) -> String {
        format!("{:.2}", d.as_secs_f64() * 1e3)
    }

    pub(super) fn run_cuda(args: &Args, backend: &cuzk_cuda::CudaBackend) -> anyhow::Result<()> {
        use cuzk_cuda::{ResidentG1, ResidentG2};
        let dev = backend.cuda_device();
        let max_g1 = args.g1.iter().copied().max().unwrap_or(0);
        let max_g2 = args.g2.iter().copied().max().unwrap_or(0);
        let distinct = 1usize << args.distinct;
        let t = Instant::now();
        let e = random_scalars(distinct, 7);
        let g1_distinct = fixed_base_g1(G1Projective::generator(), &e);
        let g2_distinct = fixed_base_g2(
            G2Projective::generator(),
            &e[..distinct.min(1 << max_g2.min(20))],
        );
        eprintln!(
            "{distinct} random bases in {:.1} s",
            t.elapsed().as_secs_f64()
        );

        println!("| MSM | points | median (ms) | runs | equal to blst |");
        println!("|---|---|---|---|---|");
        if max_g1 > 0 {
            let bases = tile(&g1_distinct, 1 << max_g1);
            let scalars = random_scalars(1 << max_g1, 11);
            // One resident object per size, set up for exactly that many points: sppark picks
            // its window width and batching from the object's size.
            for &log in &args.g1 {
                let n = 1usize << log;
                let g = dev.lock();
                let t = Instant::now();
                let res = ResidentG1::upload(dev, &g, &bases[..n]).context("uploading G1 bases")?;
                eprintln!(
                    "uploaded 2^{log} G1 bases in {:.2} s",
                    t.elapsed().as_secs_f64()
                );
                let want = msm::msm_g1(&bases[..n], &scalars[..n]).to_affine();
                // Scalars in pageable memory, then the same buffer pinned.
                for pinned in [false, true] {
                    let _pin = if pinned {
                        Some(cuzk_cuda::Pinned::new(&scalars[..n]).context("pinning the scalars")?)
                    } else {
                        None
                    };
                    let mut times = Vec::new();
                    let mut got = G1Projective::identity();
                    for run in 0..=args.runs {
                        let t = Instant::now();
                        got = res.msm(&g, &scalars[..n])?;
                        if run > 0 {
                            times.push(t.elapsed());
                        }
                    }
                    println!(
                        "| G1, bases resident, scalars {} | 2^{log} | {} | {} | {} |",
                        if pinned { "pinned" } else { "pageable" },
                        ms(median(&times)),
                        args.runs,
                        got.to_affine() == want
                    );
                }
                // Scalars already in device memory, as H's are in a proof: the MSM alone.
                let mut times = Vec::new();
                let mut got = G1Projective::identity();
                for run in 0..=args.runs {
                    let (p, took) = res.msm_scalars_on_device(&g, &scalars[..n])?;
                    got = p;
                    if run > 0 {
                        times.push(took);
                    }
                }
                println!(
                    "| G1, bases resident, scalars on the device | 2^{log} | {} | {} | {} |",
                    ms(median(&times)),
                    args.runs,
                    got.to_affine() == want
                );
            }
        }
        if max_g2 > 0 {
            let bases = tile(&g2_distinct, 1 << max_g2);
            let scalars = random_scalars(1 << max_g2, 13);
            for &log in &args.g2 {
                let n = 1usize << log;
                let g = dev.lock();
                let res = ResidentG2::upload(dev, &g, &bases[..n]).context("uploading G2 bases")?;
                let mut times = Vec::new();
                let mut got = G2Projective::identity();
                for run in 0..=args.runs {
                    let t = Instant::now();
                    got = res.msm(&g, &scalars[..n])?;
                    if run > 0 {
                        times.push(t.elapsed());
                    }
                }
                let want = msm::msm_g2(&bases[..n], &scalars[..n]);
                println!(
                    "| G2, bases resident, scalars pageable | 2^{log} | {} | {} | {} |",
                    ms(median(&times)),
                    args.runs,
                    got.to_affine() == want.to_affine()
                );
            }
        }

        println!("\n| NTT (forward, natural order) | elements | median kernel time (ms) | runs | equal to CPU |");
        println!("|---|---|---|---|---|");
        let cpu = CpuBackend::new();
        for &log in &args.ntt {
            let input = random_scalars(1 << log, 17 + log as u64);
            let mut times = Vec::new();
            let mut out = Vec::new();
            for run in 0..=args.runs {
                let mut v = input.clone();
                let gpu_ms = backend.ntt_timed(&dev.lock(), &mut v, false)?;
                if run > 0 {
                    times.push(Duration::from_secs_f64(gpu_ms as f64 / 1e3));
                }
                out = v;
            }
            let mut want = input;
            cpu.ntt(&cpu.device().lock(), &mut want, false)?;
            println!(
                "| 2^{log} | {} | {} | {} | {} |",
                1u64 << log,
                ms(median(&times)),
                args.runs,
                out == want
            );
        }
        if args.upload_gib > 0 {
            let host: Vec<u8> = (0..args.upload_gib << 30)
                .into_par_iter()
                .map(|i| i as u8)
                .collect();
            let r = cuzk_cuda::upload_rates(dev, &dev.lock(), &host)?;
            let rate = |d: Duration| r.bytes as f64 / d.as_secs_f64().max(1e-9) / 1e9;
            println!(
                "\n| host to device, {} GiB | time (ms) | GB/s |",
                args.upload_gib
            );
            println!("|---|---|---|");
            println!(
                "| from pageable memory | {} | {:.1} |",
                ms(r.pageable),
                rate(r.pageable)
            );
            println!("| pinning it (cudaHostRegister) | {} | |", ms(r.pin));
            println!(
                "| from the same memory pinned | {} | {:.1} |",
                ms(r.pinned),
                rate(r.pinned)
            );
            println!("| unpinning it | {} | |", ms(r.unpin));
        }
        if let Some(&max_split) = args.split.iter().max() {
            let bases = tile(&g1_distinct, 1 << max_split);
            super::super::gpu_split::run(
                backend,
                &bases,
                &args.split,
                args.runs,
                args.zeros,
                args.ones,
            )?;
        }
        if args.leak_proofs > 0 {
            leak_check(backend, args.leak_proofs)?;
        }
        let (free, total) = dev.mem_info()?;
        println!(
            "\ndevice {} ({}); free VRAM after the runs: {:.2} of {:.2} GiB",
            dev.info().pci_bus_id,
            dev.info().name,
            crate::stats::gib(free),
            crate::stats::gib(total)
        );
        Ok(())
    }

    /// Proves one synthetic circuit `proofs` times, half with resident parameters and half
    /// streamed, and reports free device memory before, during and after.
    fn leak_check(backend: &cuzk_cuda::CudaBackend, proofs: usize) -> anyhow::Result<()> {
        use cuzk_groth16::synthetic::SyntheticCircuit;
        use cuzk_groth16::{generate_insecure_parameters, synthesize, Pce};
        let circuit = SyntheticCircuit::filling_domain(16, 3);
        let pce = Pce::extract("leak-check", circuit)?;
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let params = generate_insecure_parameters(&pce, &mut rng)?;
        let pa = synthesize(&pce, vec![circuit])?
            .pop()
            .context("no assignment")?;
        let dev = backend.cuda_device();
        use crate::stats::gib;
        let (before, _) = dev.mem_info()?;
        let mut after_first = 0;
        let cpu = CpuBackend::new();
        for i in 0..proofs {
            let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
            let (p, _, _) = backend.prove_placed(&dev.lock(), &params, &pa, r, s)?;
            if i == 0 {
                after_first = dev.mem_info()?.0;
                let (want, _) = cpu.prove(&cpu.device().lock(), &params, &pa, r, s)?;
                ensure!(
                    p.to_bytes() == want.to_bytes(),
                    "GPU proof differs from the CPU's"
                );
            }
        }
        let (after, _) = dev.mem_info()?;
        let freed = backend.evict_resident();
        dev.trim(&dev.lock())?;
        let (trimmed, _) = dev.mem_info()?;
        println!(
            "\nVRAM across {proofs} proofs of 2^16 constraints (parameters resident): free {:.3} GiB before, {:.3} GiB after the first proof, {:.3} GiB after the last; {:.3} GiB after evicting the parameters ({} bytes) and trimming the pool",
            gib(before),
            gib(after_first),
            gib(after),
            gib(trimmed),
            freed
        );
        Ok(())
    }
}
