//! Proof kinds, sector sizes and the registered-proof numbers Lotus and Curio send.
//!
//! Numbering (go-state-types `abi`, filecoin-ffi's C enums), size index `n % 5` over
//! 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB:
//! - `RegisteredSealProof`: 0-4 V1 (API 1.0.0), 5-9 V1_1 (1.1.0), 10-14 V1_1 with synthetic
//!   PoRep (1.2.0), 15-19 V1_2 non-interactive PoRep (1.2.0). `porep_id` is the number as 8
//!   little-endian bytes, then zeros.
//! - `RegisteredPoStProof`: 0-4 Winning V1, 5-9 Window V1 (1.0.0), 10-14 Window V1_1 (filecoin-
//!   proofs' 1.2.0, which fixed challenge grinding).
//! - `RegisteredUpdateProof`: 0-4 (API 1.1.0, porep_id from the same number).

use std::fmt;

use filecoin_proofs::{
    PoRepConfig, PoStConfig, PoStType, SectorSize as FpSectorSize, WINDOW_POST_CHALLENGE_COUNT,
    WINDOW_POST_SECTOR_COUNT, WINNING_POST_CHALLENGE_COUNT, WINNING_POST_SECTOR_COUNT,
};

use storage_proofs_core::api_version::{ApiFeature, ApiVersion};

use crate::error::InputError;

/// The four proof kinds cuzk proves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProofKind {
    /// PoRep seal commit phase 2.
    PoRep,
    /// SnapDeals empty-sector update.
    SnapDeals,
    /// One WindowPoSt partition.
    WindowPoSt,
    /// WinningPoSt.
    WinningPoSt,
}

impl ProofKind {
    /// All kinds, in a fixed order.
    pub const ALL: [ProofKind; 4] = [
        ProofKind::PoRep,
        ProofKind::SnapDeals,
        ProofKind::WindowPoSt,
        ProofKind::WinningPoSt,
    ];

    /// The short name used on the command line and in circuit ids.
    pub fn name(self) -> &'static str {
        match self {
            ProofKind::PoRep => "porep",
            ProofKind::SnapDeals => "snap",
            ProofKind::WindowPoSt => "window-post",
            ProofKind::WinningPoSt => "winning-post",
        }
    }

    /// The prefix of SRS ids ("porep-32g", "snap-2k", "wpost-32g", "winning-2k").
    pub fn srs_prefix(self) -> &'static str {
        match self {
            ProofKind::PoRep => "porep",
            ProofKind::SnapDeals => "snap",
            ProofKind::WindowPoSt => "wpost",
            ProofKind::WinningPoSt => "winning",
        }
    }

    /// Parses a short name.
    pub fn parse(s: &str) -> Result<Self, InputError> {
        ProofKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                InputError::new(format!(
                    "unknown proof kind '{s}' (expected porep, snap, window-post or winning-post)"
                ))
            })
    }
}

impl fmt::Display for ProofKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The sector sizes Filecoin's registered proofs cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SectorSize {
    /// 2 KiB (test networks).
    S2KiB,
    /// 8 MiB (test networks).
    S8MiB,
    /// 512 MiB (test networks).
    S512MiB,
    /// 32 GiB.
    S32GiB,
    /// 64 GiB.
    S64GiB,
}

impl SectorSize {
    /// All sizes, in registered-proof order.
    pub const ALL: [SectorSize; 5] = [
        SectorSize::S2KiB,
        SectorSize::S8MiB,
        SectorSize::S512MiB,
        SectorSize::S32GiB,
        SectorSize::S64GiB,
    ];

    /// Bytes.
    pub fn bytes(self) -> u64 {
        match self {
            SectorSize::S2KiB => 2 << 10,
            SectorSize::S8MiB => 8 << 20,
            SectorSize::S512MiB => 512 << 20,
            SectorSize::S32GiB => 32 << 30,
            SectorSize::S64GiB => 64 << 30,
        }
    }

    /// The size of a byte count, if it is one of the five.
    pub fn from_bytes(b: u64) -> Result<Self, InputError> {
        SectorSize::ALL
            .into_iter()
            .find(|s| s.bytes() == b)
            .ok_or_else(|| InputError::new(format!("unsupported sector size {b} bytes")))
    }

    /// Parses "2KiB", "8MiB", "512MiB", "32GiB", "64GiB" (case-insensitive) or a byte count.
    pub fn parse(s: &str) -> Result<Self, InputError> {
        if let Ok(b) = s.parse::<u64>() {
            return Self::from_bytes(b);
        }
        SectorSize::ALL
            .into_iter()
            .find(|x| x.label().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                InputError::new(format!(
                    "unknown sector size '{s}' (expected 2KiB, 8MiB, 512MiB, 32GiB or 64GiB)"
                ))
            })
    }

    /// "2KiB", "8MiB", ...
    pub fn label(self) -> &'static str {
        match self {
            SectorSize::S2KiB => "2KiB",
            SectorSize::S8MiB => "8MiB",
            SectorSize::S512MiB => "512MiB",
            SectorSize::S32GiB => "32GiB",
            SectorSize::S64GiB => "64GiB",
        }
    }

    /// "2k", "8m", "512m", "32g", "64g": the suffix of SRS ids.
    pub fn short(self) -> &'static str {
        match self {
            SectorSize::S2KiB => "2k",
            SectorSize::S8MiB => "8m",
            SectorSize::S512MiB => "512m",
            SectorSize::S32GiB => "32g",
            SectorSize::S64GiB => "64g",
        }
    }

    fn index(self) -> u64 {
        SectorSize::ALL
            .iter()
            .position(|s| *s == self)
            .expect("listed") as u64
    }
}

impl fmt::Display for SectorSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A registered seal proof (also the proof id SnapDeals' PoRep config derives from).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SealProof {
    /// The registered number (0..=19).
    pub id: u64,
    /// Its sector size.
    pub size: SectorSize,
}

impl SealProof {
    /// Checks `id` is a registered seal proof number.
    pub fn from_id(id: u64) -> Result<Self, InputError> {
        if id > 19 {
            return Err(InputError::new(format!(
                "registered seal proof {id} does not exist (0 to 19)"
            )));
        }
        Ok(SealProof {
            id,
            size: SectorSize::ALL[(id % 5) as usize],
        })
    }

    /// The registered proof of `size` and generation (0 V1, 1 V1_1, 2 synthetic, 3 NI).
    pub fn of(size: SectorSize, generation: u64) -> Self {
        SealProof {
            id: generation * 5 + size.index(),
            size,
        }
    }

    /// go-state-types' name, e.g. "StackedDrg2KiBV1_1" (also the C1 JSON's `registered_proof`).
    pub fn name(self) -> String {
        let suffix = match self.id / 5 {
            0 => "V1",
            1 => "V1_1",
            2 => "V1_1_Feat_SyntheticPoRep",
            _ => "V1_2_Feat_NonInteractivePoRep",
        };
        format!("StackedDrg{}{suffix}", self.size.label())
    }

    /// Whether the C2 output is a non-interactive (aggregated) proof.
    pub fn non_interactive(self) -> bool {
        self.id >= 15
    }

    /// filecoin-proofs' configuration for this proof.
    pub fn porep_config(self) -> PoRepConfig {
        let mut porep_id = [0u8; 32];
        porep_id[..8].copy_from_slice(&self.id.to_le_bytes());
        let (version, features) = match self.id / 5 {
            0 => (ApiVersion::V1_0_0, vec![]),
            1 => (ApiVersion::V1_1_0, vec![]),
            2 => (ApiVersion::V1_2_0, vec![ApiFeature::SyntheticPoRep]),
            _ => (ApiVersion::V1_2_0, vec![ApiFeature::NonInteractivePoRep]),
        };
        PoRepConfig::new_groth16_with_features(self.size.bytes(), porep_id, version, features)
            .expect("registered proofs have valid feature sets")
    }
}

/// A registered PoSt proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PoStProof {
    /// The registered number (0..=14).
    pub id: u64,
    /// Its sector size.
    pub size: SectorSize,
}

impl PoStProof {
    /// Checks `id` is a registered PoSt proof of the given kind.
    pub fn from_id(id: u64, kind: ProofKind) -> Result<Self, InputError> {
        let ok = match kind {
            ProofKind::WinningPoSt => id <= 4,
            ProofKind::WindowPoSt => (5..=14).contains(&id),
            _ => false,
        };
        if !ok {
            return Err(InputError::new(format!(
                "registered PoSt proof {id} is not a {kind} proof ({})",
                match kind {
                    ProofKind::WinningPoSt => "winning proofs are 0 to 4",
                    _ => "window proofs are 5 to 14",
                }
            )));
        }
        Ok(PoStProof {
            id,
            size: SectorSize::ALL[(id % 5) as usize],
        })
    }

    /// The current registered proof of `kind` and `size` (Winning V1, Window V1_1).
    pub fn current(kind: ProofKind, size: SectorSize) -> Self {
        let base = if kind == ProofKind::WinningPoSt {
            0
        } else {
            10
        };
        PoStProof {
            id: base + size.index(),
            size,
        }
    }

    /// Winning or window.
    pub fn kind(self) -> ProofKind {
        if self.id <= 4 {
            ProofKind::WinningPoSt
        } else {
            ProofKind::WindowPoSt
        }
    }

    /// filecoin-proofs' configuration for this proof.
    pub fn post_config(self) -> PoStConfig {
        let api_version = if self.id >= 10 {
            ApiVersion::V1_2_0
        } else {
            ApiVersion::V1_0_0
        };
        let sector_size = FpSectorSize(self.size.bytes());
        match self.kind() {
            ProofKind::WinningPoSt => PoStConfig {
                sector_size,
                challenge_count: WINNING_POST_CHALLENGE_COUNT,
                sector_count: WINNING_POST_SECTOR_COUNT,
                typ: PoStType::Winning,
                priority: true,
                api_version,
            },
            _ => PoStConfig {
                sector_size,
                challenge_count: WINDOW_POST_CHALLENGE_COUNT,
                sector_count: *WINDOW_POST_SECTOR_COUNT
                    .read()
                    .expect("WINDOW_POST_SECTOR_COUNT poisoned")
                    .get(&self.size.bytes())
                    .expect("every registered size has a window sector count"),
                typ: PoStType::Window,
                priority: true,
                api_version,
            },
        }
    }
}

/// A registered update (SnapDeals) proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UpdateProof {
    /// The registered number (0..=4).
    pub id: u64,
    /// Its sector size.
    pub size: SectorSize,
}

impl UpdateProof {
    /// Checks `id` is a registered update proof number.
    pub fn from_id(id: u64) -> Result<Self, InputError> {
        if id > 4 {
            return Err(InputError::new(format!(
                "registered update proof {id} does not exist (0 to 4)"
            )));
        }
        Ok(UpdateProof {
            id,
            size: SectorSize::ALL[id as usize],
        })
    }

    /// The update proof of `size`.
    pub fn of(size: SectorSize) -> Self {
        UpdateProof {
            id: size.index(),
            size,
        }
    }

    /// filecoin-proofs' PoRep configuration the update proof is derived from.
    pub fn porep_config(self) -> PoRepConfig {
        let mut porep_id = [0u8; 32];
        porep_id[..8].copy_from_slice(&self.id.to_le_bytes());
        PoRepConfig::new_groth16(self.size.bytes(), porep_id, ApiVersion::V1_1_0)
    }
}

/// The prover id Lotus derives from a miner actor id: the ID address payload (unsigned
/// LEB128 of the id) in a zeroed 32-byte array.
pub fn prover_id(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut v = miner_id;
    let mut i = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[i] = byte;
            break;
        }
        out[i] = byte | 0x80;
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_proof_numbers() {
        assert_eq!(SealProof::from_id(5).unwrap().name(), "StackedDrg2KiBV1_1");
        assert_eq!(SealProof::from_id(8).unwrap().size, SectorSize::S32GiB);
        assert_eq!(
            SealProof::from_id(19).unwrap().name(),
            "StackedDrg64GiBV1_2_Feat_NonInteractivePoRep"
        );
        assert!(SealProof::from_id(20).is_err());
        let c = SealProof::from_id(5).unwrap().porep_config();
        assert_eq!(c.porep_id[0], 5);
        assert_eq!(c.api_version, ApiVersion::V1_1_0);
        assert_eq!(usize::from(c.partitions), 1);
        assert_eq!(
            usize::from(SealProof::from_id(8).unwrap().porep_config().partitions),
            10
        );
    }

    #[test]
    fn post_proof_numbers() {
        assert!(PoStProof::from_id(5, ProofKind::WinningPoSt).is_err());
        assert!(PoStProof::from_id(3, ProofKind::WindowPoSt).is_err());
        let w = PoStProof::from_id(10, ProofKind::WindowPoSt).unwrap();
        assert_eq!(w.size, SectorSize::S2KiB);
        assert_eq!(w.post_config().api_version, ApiVersion::V1_2_0);
        assert_eq!(w.post_config().sector_count, 2);
        let w32 = PoStProof::from_id(13, ProofKind::WindowPoSt)
            .unwrap()
            .post_config();
        assert_eq!(w32.sector_count, 2349);
        assert_eq!(
            PoStProof::from_id(0, ProofKind::WinningPoSt)
                .unwrap()
                .post_config()
                .challenge_count,
            66
        );
    }

    #[test]
    fn prover_ids_are_id_address_payloads() {
        assert_eq!(prover_id(1000)[..3], [0xe8, 0x07, 0]);
        assert_eq!(prover_id(0)[..2], [0, 0]);
        assert_eq!(prover_id(127)[..2], [127, 0]);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(SectorSize::parse("2KiB").unwrap(), SectorSize::S2KiB);
        assert_eq!(
            SectorSize::parse("34359738368").unwrap(),
            SectorSize::S32GiB
        );
        assert!(SectorSize::parse("3KiB").is_err());
    }
}
