//! The sealed part of the 2 KiB fixtures: a real sector sealed with filecoin-proofs, its
//! C1 outputs (interactive and NI-PoRep), PoSt vanilla proofs, and a SnapDeals update of it,
//! written as the inputs clients send (see [`crate::fixtures`] for the folder's layout).

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

use base64::Engine as _;
use filecoin_proofs::{
    add_piece, clear_cache, encode_into, generate_fallback_sector_challenges,
    generate_partition_proofs, generate_piece_commitment, generate_single_vanilla_proof,
    seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2, MerkleTreeTrait,
    PaddedBytesAmount, PrivateReplicaInfo, SectorUpdateConfig, UnpaddedBytesAmount,
};
use rand::{Rng, RngCore, SeedableRng};
use storage_proofs_core::sector::SectorId;

use crate::decode::{C1Output, C1VanillaProofs, C1Wrapper};
use crate::error::{Error, Result};
use crate::fixtures::{hex, PoRepFixture, PoStFixture, Progress, SnapFixture, FIXTURE_MINER_ID};
use crate::registry::{prover_id, PoStProof, ProofKind, SealProof, SectorSize, UpdateProof};

fn proofs_err(what: &'static str) -> impl Fn(anyhow::Error) -> Error {
    move |e| Error::proofs(format!("{what}: {e:#}"))
}

struct Sealed {
    sector_id: u64,
    sealed: PathBuf,
    cache: PathBuf,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
}

fn random_file(path: &Path, len: u64, rng: &mut impl RngCore) -> Result<()> {
    let mut data = vec![0u8; len as usize];
    rng.fill_bytes(&mut data);
    fs::write(path, &data).map_err(|e| Error::io(path, e))
}

fn stage_piece(
    dir: &Path,
    name: &str,
    size: u64,
    rng: &mut impl RngCore,
) -> Result<(PathBuf, filecoin_proofs::PieceInfo)> {
    let unpadded = UnpaddedBytesAmount::from(PaddedBytesAmount(size));
    let piece = dir.join(format!("{name}.piece"));
    random_file(&piece, unpadded.0, rng)?;
    let info = generate_piece_commitment(
        File::open(&piece).map_err(|e| Error::io(&piece, e))?,
        unpadded,
    )
    .map_err(proofs_err("piece commitment"))?;
    let staged = dir.join(format!("{name}.staged"));
    let mut out = File::create(&staged).map_err(|e| Error::io(&staged, e))?;
    add_piece(
        File::open(&piece).map_err(|e| Error::io(&piece, e))?,
        &mut out,
        unpadded,
        &[],
    )
    .map_err(proofs_err("add piece"))?;
    Ok((staged, info))
}

fn seal_sector<Tree: 'static + MerkleTreeTrait>(
    dir: &Path,
    proof: SealProof,
    sector_id: u64,
    rng: &mut impl RngCore,
    ticket: [u8; 32],
) -> Result<(Sealed, Vec<filecoin_proofs::PieceInfo>)> {
    let config = proof.porep_config();
    let (staged, info) = stage_piece(dir, &format!("sector-{sector_id}"), proof.size.bytes(), rng)?;
    let sealed = dir.join(format!("sector-{sector_id}.sealed"));
    File::create(&sealed).map_err(|e| Error::io(&sealed, e))?;
    let cache = dir.join(format!("sector-{sector_id}.cache"));
    fs::create_dir_all(&cache).map_err(|e| Error::io(&cache, e))?;
    let pieces = vec![info];
    let p1 = seal_pre_commit_phase1::<_, _, _, Tree>(
        &config,
        &cache,
        &staged,
        &sealed,
        prover_id(FIXTURE_MINER_ID),
        SectorId::from(sector_id),
        ticket,
        &pieces,
    )
    .map_err(proofs_err("seal pre-commit phase 1"))?;
    let out = seal_pre_commit_phase2(&config, p1, &cache, &sealed)
        .map_err(proofs_err("seal pre-commit phase 2"))?;
    Ok((
        Sealed {
            sector_id,
            sealed,
            cache,
            comm_r: out.comm_r,
            comm_d: out.comm_d,
        },
        pieces,
    ))
}

/// Randomness as chain randomness reaches the proofs: 32 bytes with the top two bits clear.
pub(crate) fn post_randomness(rng: &mut impl RngCore) -> [u8; 32] {
    let mut r = [0u8; 32];
    rng.fill_bytes(&mut r);
    r[31] &= 0x3f;
    r
}

pub(crate) struct SectorInputs {
    pub porep: PoRepFixture,
    pub porep_ni: PoRepFixture,
    pub winning: PoStFixture,
    pub window: PoStFixture,
    pub snap: SnapFixture,
}

/// Runs C1 for a sealed sector and writes its output as `<name>.json` (and, Curio's wrapper,
/// `<name>-wrapped.json`) under `inputs`.
fn write_c1<Tree: 'static + MerkleTreeTrait<Hasher = filecoin_proofs::TreeRHasher>>(
    inputs: &Path,
    name: &str,
    proof: SealProof,
    s: &Sealed,
    ticket: [u8; 32],
    seed: [u8; 32],
    pieces: &[filecoin_proofs::PieceInfo],
) -> Result<PoRepFixture> {
    let c1 = seal_commit_phase1::<_, Tree>(
        &proof.porep_config(),
        &s.cache,
        &s.sealed,
        prover_id(FIXTURE_MINER_ID),
        SectorId::from(s.sector_id),
        ticket,
        seed,
        filecoin_proofs::SealPreCommitOutput {
            comm_r: s.comm_r,
            comm_d: s.comm_d,
        },
        pieces,
    )
    .map_err(proofs_err("seal commit phase 1"))?;
    let json = serde_json::to_vec(&C1Output::<Tree> {
        registered_proof: proof.name(),
        vanilla_proofs: C1VanillaProofs::for_size(proof.size, c1.vanilla_proofs),
        comm_r: c1.comm_r,
        comm_d: c1.comm_d,
        replica_id: c1.replica_id,
        seed: c1.seed,
        ticket: c1.ticket,
    })
    .map_err(|e| Error::proofs(format!("encoding C1 output: {e}")))?;
    let wrapped = serde_json::to_vec(&C1Wrapper {
        sector_num: s.sector_id,
        phase1_out: base64::engine::general_purpose::STANDARD.encode(&json),
        sector_size: proof.size.bytes(),
    })
    .map_err(|e| Error::proofs(format!("encoding wrapper: {e}")))?;
    let write = |file: String, bytes: &[u8]| -> Result<String> {
        let path = inputs.join(&file);
        fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
        Ok(format!("inputs/{file}"))
    };
    Ok(PoRepFixture {
        registered_proof: proof.id,
        sector_number: s.sector_id,
        c1_json: write(format!("{name}.json"), &json)?,
        c1_wrapped: write(format!("{name}-wrapped.json"), &wrapped)?,
        comm_r: hex(&s.comm_r),
        comm_d: hex(&s.comm_d),
    })
}

pub(crate) fn make_sector_inputs<
    Tree: 'static + MerkleTreeTrait<Hasher = filecoin_proofs::TreeRHasher>,
>(
    out: &Path,
    size: SectorSize,
    progress: &dyn Progress,
) -> Result<SectorInputs> {
    let sectors = out.join("sectors");
    let inputs = out.join("inputs");
    // Sealing and encoding must not meet the caches of an earlier, incomplete run.
    if sectors.exists() {
        fs::remove_dir_all(&sectors).map_err(|e| Error::io(&sectors, e))?;
    }
    for d in [&sectors, &inputs] {
        fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
    }
    let mut rng = rand_chacha::ChaCha8Rng::from_entropy();
    let seal_proof = SealProof::of(size, 1);
    let prover = prover_id(FIXTURE_MINER_ID);
    let write_input = |name: &str, bytes: &[u8]| -> Result<String> {
        let path = inputs.join(name);
        fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
        Ok(format!("inputs/{name}"))
    };

    let t = Instant::now();
    progress.step(&format!("sealing three {size} sectors"));
    let (t1, t2): ([u8; 32], [u8; 32]) = (rng.gen(), rng.gen());
    let (s1, pieces1) = seal_sector::<Tree>(&sectors, seal_proof, 1, &mut rng, t1)?;
    let (s2, _) = seal_sector::<Tree>(&sectors, seal_proof, 2, &mut rng, t2)?;
    let t3: [u8; 32] = rng.gen();
    let ni_proof = SealProof::of(size, 3);
    let (s3, pieces3) = seal_sector::<Tree>(&sectors, ni_proof, 3, &mut rng, t3)?;
    progress.done(t.elapsed());

    let t = Instant::now();
    progress.step("PoRep commit phase 1 (C1), interactive and non-interactive");
    let mut seed: [u8; 32] = rng.gen();
    seed[0] |= 1;
    let porep = write_c1::<Tree>(&inputs, "porep-c1", seal_proof, &s1, t1, seed, &pieces1)?;
    let porep_ni = write_c1::<Tree>(&inputs, "porep-ni-c1", ni_proof, &s3, t3, [0; 32], &pieces3)?;
    for s in [&s1, &s2, &s3] {
        clear_cache(&s.cache).map_err(proofs_err("clearing the sealing cache"))?;
    }
    progress.done(t.elapsed());

    let t = Instant::now();
    progress.step("PoSt vanilla proofs");
    let post = |kind: ProofKind,
                sealed: &[&Sealed],
                name: &str,
                rng: &mut rand_chacha::ChaCha8Rng|
     -> Result<PoStFixture> {
        let proof = PoStProof::current(kind, size);
        let cfg = proof.post_config();
        let randomness = post_randomness(rng);
        let ids: Vec<SectorId> = sealed.iter().map(|s| SectorId::from(s.sector_id)).collect();
        let challenges =
            generate_fallback_sector_challenges::<Tree>(&cfg, &randomness, &ids, prover)
                .map_err(proofs_err("PoSt challenges"))?;
        let mut vanilla = Vec::new();
        for (i, s) in sealed.iter().enumerate() {
            let replica =
                PrivateReplicaInfo::<Tree>::new(s.sealed.clone(), s.comm_r, s.cache.clone())
                    .map_err(proofs_err("replica info"))?;
            let id = SectorId::from(s.sector_id);
            let v = generate_single_vanilla_proof::<Tree>(&cfg, id, &replica, &challenges[&id])
                .map_err(proofs_err("PoSt vanilla proof"))?;
            let bytes =
                bincode::serialize(&v).map_err(|e| Error::proofs(format!("bincode: {e}")))?;
            vanilla.push(write_input(&format!("{name}-{i}.bin"), &bytes)?);
        }
        Ok(PoStFixture {
            registered_proof: proof.id,
            randomness: hex(&randomness),
            partition_index: 0,
            sectors: sealed.iter().map(|s| s.sector_id).collect(),
            vanilla,
        })
    };
    let winning = post(ProofKind::WinningPoSt, &[&s1], "winning", &mut rng)?;
    let window = post(ProofKind::WindowPoSt, &[&s1, &s2], "window", &mut rng)?;
    progress.done(t.elapsed());

    let t = Instant::now();
    progress.step("SnapDeals encoding and vanilla proofs");
    let update = UpdateProof::of(size);
    let ucfg = SectorUpdateConfig::from_porep_config(&update.porep_config());
    let (staged, info) = stage_piece(&sectors, "sector-1-update", size.bytes(), &mut rng)?;
    let new_sealed = sectors.join("sector-1-update.sealed");
    let new_cache = sectors.join("sector-1-update.cache");
    fs::create_dir_all(&new_cache).map_err(|e| Error::io(&new_cache, e))?;
    let len = fs::metadata(&s1.sealed)
        .map_err(|e| Error::io(&s1.sealed, e))?
        .len();
    OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&new_sealed)
        .and_then(|f| f.set_len(len))
        .map_err(|e| Error::io(&new_sealed, e))?;
    let encoded = encode_into::<Tree>(
        &ucfg,
        &new_sealed,
        &new_cache,
        &s1.sealed,
        &s1.cache,
        &staged,
        &[info],
    )
    .map_err(proofs_err("SnapDeals encoding"))?;
    let partition_proofs = generate_partition_proofs::<Tree>(
        ucfg,
        s1.comm_r,
        encoded.comm_r_new,
        encoded.comm_d_new,
        &s1.sealed,
        &s1.cache,
        &new_sealed,
        &new_cache,
    )
    .map_err(proofs_err("SnapDeals vanilla proofs"))?;
    let mut vanilla = Vec::new();
    for (k, p) in partition_proofs.iter().enumerate() {
        let bytes = bincode::serialize(p).map_err(|e| Error::proofs(format!("bincode: {e}")))?;
        vanilla.push(write_input(&format!("snap-{k}.bin"), &bytes)?);
    }
    let snap = SnapFixture {
        registered_proof: update.id,
        sector_number: s1.sector_id,
        comm_r_old: hex(&s1.comm_r),
        comm_r_new: hex(&encoded.comm_r_new),
        comm_d_new: hex(&encoded.comm_d_new),
        vanilla,
    };
    progress.done(t.elapsed());
    Ok(SectorInputs {
        porep,
        porep_ni,
        winning,
        window,
        snap,
    })
}
