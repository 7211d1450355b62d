//! `cuzk bench scale --stream N`: a steady stream of N timing-only production-size proofs
//! (PoRep or SnapDeals) through the engine on one device, as a daemon runs them (synthesis
//! pipelined with proving): proofs per hour and the device's busy fraction; then, where the
//! folder has the WinningPoSt parameters, WinningPoSt latency idle and under that stream (real
//! inputs, verified).
//!
//! The stream's jobs are [`TimingWork`]: the timing-only plan against random-point
//! parameters. The engine checks each partition as it comes off the device; for these the
//! check runs (so its cost is in the figures) but its verdict is ignored, since nothing can
//! verify them. Every line of the report says "timing only".

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::ensure;
use cuzk_engine::{
    ContentDigest, Device, Engine, EngineConfig, Lease, Priority, ProofWork, Synthesized, WorkError,
};
use cuzk_filecoin::{partition_bytes, prove_partition, FilecoinWork, ProofPlan};
use cuzk_groth16::{Parameters, Pce, PreparedVerifyingKey, Proof, ProvingBackend};

use super::engine::done_timed as done;
use crate::stats::{gib, median, secs};

/// Printed beside every figure from timing-only inputs.
pub const LABEL: &str = "TIMING ONLY, NOT VERIFIED";

/// A timing-only plan as engine work (see the module docs).
pub struct TimingWork {
    plan: Arc<dyn ProofPlan>,
    params: Arc<Parameters>,
    pce: Arc<Pce>,
    pvk: PreparedVerifyingKey,
    bytes: (u64, u64),
}

impl TimingWork {
    /// Work for a timing-only `plan`; an error for any other plan.
    pub fn new(
        plan: Arc<dyn ProofPlan>,
        params: Arc<Parameters>,
        pce: Arc<Pce>,
    ) -> anyhow::Result<Self> {
        ensure!(
            plan.timing_only(),
            "TimingWork is for timing-only inputs; real inputs go through FilecoinWork"
        );
        Ok(TimingWork {
            pvk: PreparedVerifyingKey::new(&params.vk),
            bytes: partition_bytes(&params),
            plan,
            params,
            pce,
        })
    }
}

impl ProofWork for TimingWork {
    fn kind(&self) -> &str {
        self.plan.kind().name()
    }
    fn priority(&self) -> Priority {
        Priority::Normal
    }
    fn content(&self) -> ContentDigest {
        self.plan.content()
    }
    fn partitions(&self) -> usize {
        self.plan.partitions()
    }
    fn host_bytes_per_partition(&self) -> u64 {
        self.bytes.0
    }
    fn device_bytes_per_partition(&self) -> u64 {
        self.bytes.1
    }
    fn synthesize(&self, k: usize) -> Result<Synthesized, WorkError> {
        self.plan
            .synthesize(k, Some(&self.pce))
            .map(|s| s.assignment)
            .map_err(|e| WorkError::Internal(e.to_string()))
    }
    fn prove(
        &self,
        _k: usize,
        syn: &Synthesized,
        device: &Lease<'_>,
    ) -> Result<Vec<u8>, WorkError> {
        prove_partition(self.params.as_ref(), syn, device)
    }
    /// Runs the check a real partition gets, for its cost, and ignores the verdict: these
    /// inputs verify against nothing (see the module docs).
    fn verify_partition(
        &self,
        _k: usize,
        syn: &Synthesized,
        proof: &[u8],
    ) -> Result<bool, WorkError> {
        let proof = Proof::from_bytes(proof)
            .map_err(|e| WorkError::Internal(format!("proof bytes: {e}")))?;
        let _ = self.pvk.verify(&proof, syn.public_inputs());
        Ok(true)
    }
    fn finish(&self, partitions: Vec<Vec<u8>>) -> Result<Vec<u8>, WorkError> {
        Ok(partitions.concat())
    }
}

/// What the stream runs.
pub struct Stream<'a> {
    /// The device's backend.
    pub backend: &'a Arc<dyn ProvingBackend>,
    /// One job's work (the same plan for every job of the stream).
    pub work: Arc<TimingWork>,
    /// Jobs in the stream.
    pub jobs: usize,
    /// Partitions synthesized at once.
    pub synthesis_threads: usize,
    /// Host memory for partitions in flight.
    pub host_budget: u64,
    /// WinningPoSt work (real, verified) to time idle and under the stream, and how often.
    pub winning: Option<(Arc<FilecoinWork>, usize)>,
}

fn engine(s: &Stream<'_>) -> anyhow::Result<Engine> {
    Ok(Engine::start(
        EngineConfig {
            queue_capacity: 1024,
            synthesis_threads: s.synthesis_threads,
            urgent_synthesis_threads: 1,
            workers_per_device: 2,
            retention: Duration::from_secs(24 * 3600),
            host_budget: s.host_budget,
            pipeline: true,
            ..EngineConfig::default()
        },
        vec![Device::new(s.backend.clone())],
    )?)
}

/// Runs the stream and prints its report.
pub fn run(s: &Stream<'_>) -> anyhow::Result<()> {
    ensure!(s.jobs >= 1, "--stream must be at least 1");
    ensure!(
        s.winning.as_ref().is_none_or(|(_, r)| *r >= 1),
        "--winning-runs must be at least 1"
    );
    let kind = s.work.plan.kind();
    let parts = s.work.partitions();
    println!();
    println!(
        "Stream of {} {kind} proofs of {parts} partitions through the engine ({LABEL}), {} \
         synthesis threads, host budget for partitions {:.1} GiB",
        s.jobs,
        s.synthesis_threads,
        gib(s.host_budget)
    );
    let e = engine(s)?;
    let t = Instant::now();
    for j in 0..s.jobs {
        e.submit(&format!("stream-{j}"), s.work.clone(), None)?;
    }
    let mut finished = Vec::new();
    for j in 0..s.jobs {
        done(&e, &format!("stream-{j}"))?;
        finished.push(t.elapsed());
        eprintln!(
            "stream proof {} done at {} s ({LABEL})",
            j + 1,
            secs(t.elapsed())
        );
    }
    let wall = t.elapsed();
    let busy = e.status().devices[0].busy;
    // The steady rate: from the first proof's end to the last's (the first includes the
    // pipeline filling up).
    let steady = (s.jobs > 1).then(|| (finished[s.jobs - 1] - finished[0]) / (s.jobs as u32 - 1));
    println!("| proofs | wall (s) | s per proof (steady) | proofs/hour | device busy | note |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| {} | {} | {} | {:.1} | {:.0} % | {LABEL} |",
        s.jobs,
        secs(wall),
        steady.map_or_else(|| "-".into(), secs),
        s.jobs as f64 * 3600.0 / wall.as_secs_f64(),
        100.0 * busy.as_secs_f64() / wall.as_secs_f64()
    );
    e.shutdown(Duration::from_secs(5), true);

    let Some((winning, runs)) = &s.winning else {
        return Ok(());
    };
    let e = engine(s)?;
    let mut idle = Vec::new();
    for r in 0..=*runs {
        let id = format!("w-idle-{r}");
        e.submit(&id, winning.clone(), None)?;
        let t = done(&e, &id)?;
        // The first run uploads the parameters.
        if r > 0 {
            idle.push(t.total);
        }
    }
    let load = 2;
    for j in 0..load {
        e.submit(&format!("load-{j}"), s.work.clone(), None)?;
    }
    std::thread::sleep(Duration::from_secs(5));
    let mut loaded = Vec::new();
    for r in 0..*runs {
        let id = format!("w-load-{r}");
        e.submit(&id, winning.clone(), None)?;
        loaded.push(done(&e, &id)?.total);
    }
    let unfinished = (0..load)
        .filter(|j| {
            e.await_job(&format!("load-{j}"), Some(Duration::ZERO))
                .is_ok_and(|v| !v.status.is_terminal())
        })
        .count();
    let (i, l) = (median(&idle), median(&loaded));
    println!();
    println!("| WinningPoSt (verified), median of {runs} | idle (s) | under the {kind} stream (s) | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| {} GiB sector | {} | {} | {:.2}x |",
        winning.plan().circuit().size.bytes() >> 30,
        secs(i),
        secs(l),
        l.as_secs_f64() / i.as_secs_f64()
    );
    println!(
        "The load ({LABEL}) was {load} {kind} proofs; {unfinished} of them were still unfinished \
         after the last loaded run (if 0, part of the loaded figure was idle)."
    );
    e.shutdown(Duration::ZERO, true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use cuzk_filecoin::fixtures::{
        bind_fixture_dirs, ensure_fixtures_locked, fixture_store, Quiet,
    };
    use cuzk_filecoin::timing_inputs::snap_request;
    use cuzk_filecoin::{plan, plan_for_timing, ProofKind, SectorSize, UpdateProof};
    use cuzk_groth16::{random_point_parameters, CpuBackend};
    use rand::SeedableRng;

    use super::*;

    fn fixtures() -> (PathBuf, cuzk_filecoin::fixtures::Manifest) {
        let dir = match std::env::var_os("CUZK_TEST_FIXTURES") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/cuzk-test-fixtures"),
        };
        bind_fixture_dirs(&dir).unwrap();
        let m = ensure_fixtures_locked(&dir, SectorSize::S2KiB, &Quiet, Duration::from_secs(1800))
            .unwrap();
        (dir, m)
    }

    #[test]
    fn a_timing_only_stream_runs_through_the_engine_with_winning_post_beside_it() {
        let (dir, m) = fixtures();
        let store = fixture_store(&dir);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let req = snap_request::<filecoin_proofs::SectorShapeBase>(
            UpdateProof::of(SectorSize::S2KiB),
            &mut rng,
        )
        .unwrap();
        let p = plan_for_timing(&req).unwrap();
        let pce = store.pce(p.circuit()).unwrap();
        let params = Arc::new(random_point_parameters(&pce, 1).unwrap());
        // Real inputs are refused as timing work.
        let real = plan(&m.request(&dir, ProofKind::SnapDeals).unwrap()).unwrap();
        assert!(TimingWork::new(real, params.clone(), pce.clone()).is_err());

        let winning = plan(&m.request(&dir, ProofKind::WinningPoSt).unwrap()).unwrap();
        let backend: Arc<dyn ProvingBackend> = Arc::new(CpuBackend::new());
        run(&Stream {
            backend: &backend,
            work: Arc::new(TimingWork::new(p, params, pce).unwrap()),
            jobs: 2,
            synthesis_threads: 1,
            host_budget: 4 << 30,
            winning: Some((
                Arc::new(FilecoinWork::new(winning, &store, true).unwrap()),
                1,
            )),
        })
        .unwrap();
    }
}
