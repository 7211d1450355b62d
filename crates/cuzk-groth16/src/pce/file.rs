//! The PCE file format (version 1).
//!
//! ```text
//! header   magic "CUZKPCE\0" | version u32 | flags u32 | id_len u32 | reserved u32
//!          num_inputs u64 | num_aux u64 | num_constraints u64 | num_coeffs u64
//!          nnz_a u64 | nnz_b u64 | nnz_c u64 | fingerprint [32] | checksum [32]
//!          circuit id (id_len bytes of UTF-8)
//! body     coefficients (num_coeffs x 32 bytes, canonical little-endian)
//!          A, B, C: row pointers (num_constraints + 1) x u32 | columns nnz x u32 |
//!                   coefficient indices nnz x (u16 when flags bit 0, else u32)
//!          densities: a_aux, b_input, b_aux as u64 words
//! ```
//!
//! All integers are little-endian. With `body` = BLAKE3 of the body: `fingerprint` is BLAKE3
//! of the counts and `body`, so it names the structure independently of the circuit id;
//! `checksum` is BLAKE3 of the header (checksum field zeroed), the circuit id and `body`, so
//! a change anywhere in the file is caught.
//! Loading checks the magic, version, circuit id, that the file length is exactly what the
//! counts imply (before allocating anything), the checksum, the fingerprint, and every index,
//! so a damaged or foreign file is an error, never a panic.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use blstrs::Scalar;

use super::matrix::{CoeffIndices, Matrix};
use super::Pce;
use crate::assignment::Density;
use crate::bits::DensityBits;
use crate::error::{Error, Result};

#[cfg(not(target_endian = "little"))]
compile_error!(
    "the PCE file format is read and written in host byte order, which must be little-endian"
);

const MAGIC: [u8; 8] = *b"CUZKPCE\0";
/// The format version this build reads and writes.
pub const PCE_FORMAT_VERSION: u32 = 2;
const FLAG_NARROW: u32 = 1;
const FIXED_HEADER_LEN: usize = 8 + 4 * 4 + 8 * 7 + 32 + 32;
const MAX_ID_LEN: usize = 256;

/// The counts that determine a body's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    num_inputs: u64,
    num_aux: u64,
    num_constraints: u64,
    num_coeffs: u64,
    nnz: [u64; 3],
}

impl Counts {
    pub(crate) fn of(pce: &Pce) -> Self {
        Counts {
            num_inputs: pce.num_inputs as u64,
            num_aux: pce.num_aux as u64,
            num_constraints: pce.num_constraints() as u64,
            num_coeffs: pce.coeffs.len() as u64,
            nnz: [pce.a.nnz() as u64, pce.b.nnz() as u64, pce.c.nnz() as u64],
        }
    }

    fn narrow(&self) -> bool {
        self.num_coeffs <= 1 << 16
    }

    fn to_bytes(self) -> Vec<u8> {
        [
            self.num_inputs,
            self.num_aux,
            self.num_constraints,
            self.num_coeffs,
            self.nnz[0],
            self.nnz[1],
            self.nnz[2],
        ]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect()
    }
}

/// Body length in bytes, or `None` on overflow (only a corrupt header gets there).
fn checked_body_len(c: &Counts) -> Option<u64> {
    let idx_width = if c.narrow() { 2 } else { 4 };
    let mut len = c.num_coeffs.checked_mul(32)?;
    for nnz in c.nnz {
        len = len
            .checked_add(c.num_constraints.checked_mul(2)?)?
            .checked_add(nnz.checked_mul(4 + idx_width)?)?;
    }
    let words = |n: u64| n.div_ceil(64).checked_mul(8);
    len.checked_add(words(c.num_aux)?)?
        .checked_add(words(c.num_inputs)?)?
        .checked_add(words(c.num_aux)?)
}

pub(crate) fn body_len(c: &Counts) -> u64 {
    checked_body_len(c).unwrap_or(u64::MAX)
}

/// Bytes a loaded PCE of these counts holds: the body, and each matrix's row index.
pub(crate) fn memory_len(c: &Counts) -> u64 {
    body_len(c).saturating_add(3 * Matrix::index_bytes(c.num_constraints))
}

/// The header of a PCE file, readable without loading the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PceHeader {
    /// Format version.
    pub version: u32,
    /// The circuit id the file was written for.
    pub circuit_id: String,
    /// Public inputs, the constant one included.
    pub num_inputs: u64,
    /// Auxiliary variables.
    pub num_aux: u64,
    /// Constraints, input-consistency constraints included.
    pub num_constraints: u64,
    /// Structure fingerprint.
    pub fingerprint: [u8; 32],
    checksum: [u8; 32],
    counts: Counts,
    flags: u32,
    raw: [u8; FIXED_HEADER_LEN],
}

impl PceHeader {
    /// Bytes the PCE takes in memory once loaded (its body and row index), from the counts.
    pub fn body_bytes(&self) -> u64 {
        memory_len(&self.counts)
    }
}

/// The file checksum: the fixed header with its checksum field zeroed, the id, the body hash.
fn file_checksum(raw: &[u8; FIXED_HEADER_LEN], id: &[u8], body_hash: &[u8; 32]) -> [u8; 32] {
    let mut zeroed = *raw;
    zeroed[112..144].fill(0);
    let mut h = blake3::Hasher::new();
    h.update(b"cuzk-pce-file-v1");
    h.update(&zeroed);
    h.update(id);
    h.update(body_hash);
    *h.finalize().as_bytes()
}

fn body_writer<W: Write>(pce: &Pce, w: &mut W) -> std::io::Result<()> {
    for c in &pce.coeffs {
        w.write_all(&c.to_bytes_le())?;
    }
    for m in [&pce.a, &pce.b, &pce.c] {
        w.write_all(bytemuck::cast_slice(&m.lens))?;
        w.write_all(bytemuck::cast_slice(&m.cols))?;
        match &m.coeffs {
            CoeffIndices::Narrow(v) => w.write_all(bytemuck::cast_slice(v))?,
            CoeffIndices::Wide(v) => w.write_all(bytemuck::cast_slice(v))?,
        }
    }
    let d = &pce.density;
    for bits in [&d.a_aux, &d.b_input, &d.b_aux] {
        w.write_all(bytemuck::cast_slice(bits.words()))?;
    }
    Ok(())
}

struct HashWriter(blake3::Hasher);

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn fingerprint_of(counts: &Counts, checksum: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"cuzk-pce-structure-v1");
    h.update(&counts.to_bytes());
    h.update(checksum);
    *h.finalize().as_bytes()
}

fn checksum_of(pce: &Pce) -> [u8; 32] {
    let mut h = HashWriter(blake3::Hasher::new());
    body_writer(pce, &mut h).expect("hashing never fails");
    *h.0.finalize().as_bytes()
}

pub(crate) fn fingerprint(pce: &Pce) -> [u8; 32] {
    fingerprint_of(&Counts::of(pce), &checksum_of(pce))
}

impl Pce {
    /// Writes this PCE to `path` atomically (a temporary file renamed into place).
    pub fn save(&self, path: &Path) -> Result<()> {
        if self.circuit_id.len() > MAX_ID_LEN {
            return Err(Error::PceFile {
                path: path.into(),
                reason: format!("circuit id longer than {MAX_ID_LEN} bytes"),
            });
        }
        let counts = Counts::of(self);
        let body_hash = checksum_of(self);
        let mut raw = [0u8; FIXED_HEADER_LEN];
        let flags = if counts.narrow() { FLAG_NARROW } else { 0 };
        raw[..8].copy_from_slice(&MAGIC);
        raw[8..12].copy_from_slice(&PCE_FORMAT_VERSION.to_le_bytes());
        raw[12..16].copy_from_slice(&flags.to_le_bytes());
        raw[16..20].copy_from_slice(&(self.circuit_id.len() as u32).to_le_bytes());
        raw[24..80].copy_from_slice(&counts.to_bytes());
        raw[80..112].copy_from_slice(&self.fingerprint);
        let checksum = file_checksum(&raw, self.circuit_id.as_bytes(), &body_hash);
        raw[112..144].copy_from_slice(&checksum);
        let tmp = tmp_path(path);
        let write = || -> std::io::Result<()> {
            let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
            w.write_all(&raw)?;
            w.write_all(self.circuit_id.as_bytes())?;
            body_writer(self, &mut w)?;
            w.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        if let Err(e) = write().and_then(|()| std::fs::rename(&tmp, path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(path, e));
        }
        Ok(())
    }

    /// Reads only the header of a PCE file.
    pub fn read_header(path: &Path) -> Result<PceHeader> {
        let mut r = BufReader::new(File::open(path).map_err(|e| Error::io(path, e))?);
        read_header(path, &mut r)
    }

    /// Loads a PCE file written by [`Pce::save`], refusing it unless it is intact and (when
    /// `expected_id` is given) was written for that circuit id.
    pub fn load(path: &Path, expected_id: Option<&str>) -> Result<Pce> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let mut r = BufReader::with_capacity(1 << 20, file);
        let h = read_header(path, &mut r)?;
        let bad = |reason: String| Error::PceFile {
            path: path.into(),
            reason,
        };
        if let Some(id) = expected_id {
            if id != h.circuit_id {
                return Err(bad(format!(
                    "written for circuit '{}', expected '{id}'",
                    h.circuit_id
                )));
            }
        }
        let c = h.counts;
        let expected_len = checked_body_len(&c)
            .and_then(|b| b.checked_add((FIXED_HEADER_LEN + h.circuit_id.len()) as u64))
            .ok_or_else(|| bad("header counts overflow".into()))?;
        if file_len < expected_len {
            return Err(bad(format!(
                "truncated: {file_len} bytes, the header announces {expected_len}"
            )));
        }
        if file_len > expected_len {
            return Err(bad(format!(
                "{} trailing bytes after the announced {expected_len}",
                file_len - expected_len
            )));
        }
        if (h.flags & FLAG_NARROW != 0) != c.narrow() || h.flags & !FLAG_NARROW != 0 {
            return Err(bad(format!("unexpected flags {:#x}", h.flags)));
        }

        let mut body = BodyReader {
            r,
            hasher: blake3::Hasher::new(),
            path,
        };
        let coeff_bytes: Vec<[u8; 32]> = body.read_vec(c.num_coeffs)?;
        let mut mats = Vec::with_capacity(3);
        for nnz in c.nnz {
            let lens: Vec<u16> = body.read_vec(c.num_constraints)?;
            let cols: Vec<u32> = body.read_vec(nnz)?;
            let coeffs = if c.narrow() {
                CoeffIndices::Narrow(body.read_vec(nnz)?)
            } else {
                CoeffIndices::Wide(body.read_vec(nnz)?)
            };
            mats.push(Matrix::new(lens, cols, coeffs).map_err(bad)?);
        }
        let mut dens = Vec::with_capacity(3);
        for n in [c.num_aux, c.num_inputs, c.num_aux] {
            let words: Vec<u64> = body.read_vec(n.div_ceil(64))?;
            dens.push(
                DensityBits::from_words(words, n as usize)
                    .ok_or_else(|| bad("density bitmap has bits past its variable count".into()))?,
            );
        }
        let body_hash = *body.hasher.finalize().as_bytes();
        if file_checksum(&h.raw, h.circuit_id.as_bytes(), &body_hash) != h.checksum {
            return Err(bad("checksum mismatch (the file is corrupt)".into()));
        }
        if fingerprint_of(&c, &body_hash) != h.fingerprint {
            return Err(bad(
                "fingerprint does not match the body (the header is corrupt)".into(),
            ));
        }

        let coeffs = coeff_bytes
            .iter()
            .map(|b| Option::<Scalar>::from(Scalar::from_bytes_le(b)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("a coefficient is not a canonical field element".into()))?;
        if coeffs.len() < 2 || coeffs[0] != Scalar::from(1u64) || coeffs[1] != -Scalar::from(1u64) {
            return Err(bad("coefficient table does not start with 1, -1".into()));
        }
        for (name, m) in ["A", "B", "C"].iter().zip(&mats) {
            m.validate(c.num_inputs as usize, c.num_aux as usize, coeffs.len())
                .map_err(|e| bad(format!("matrix {name}: {e}")))?;
        }
        let [a, b, cm]: [Matrix; 3] = mats.try_into().map_err(|_| bad("matrix count".into()))?;
        let [a_aux, b_input, b_aux]: [DensityBits; 3] =
            dens.try_into().map_err(|_| bad("density count".into()))?;
        Ok(Pce {
            circuit_id: h.circuit_id,
            num_inputs: c.num_inputs as usize,
            num_aux: c.num_aux as usize,
            coeffs,
            a,
            b,
            c: cm,
            density: std::sync::Arc::new(Density {
                a_aux,
                b_input,
                b_aux,
            }),
            fingerprint: h.fingerprint,
        })
    }
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp.{}", std::process::id()));
    path.with_file_name(name)
}

fn read_header<R: Read>(path: &Path, r: &mut R) -> Result<PceHeader> {
    let bad = |reason: &str| Error::PceFile {
        path: path.into(),
        reason: reason.to_owned(),
    };
    let mut fixed = [0u8; FIXED_HEADER_LEN];
    r.read_exact(&mut fixed)
        .map_err(|_| bad("truncated header"))?;
    if fixed[..8] != MAGIC {
        return Err(bad("not a PCE file (bad magic)"));
    }
    let u32_at = |o: usize| u32::from_le_bytes(fixed[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(fixed[o..o + 8].try_into().expect("8 bytes"));
    let version = u32_at(8);
    if version != PCE_FORMAT_VERSION {
        return Err(Error::PceFile {
            path: path.into(),
            reason: format!("format version {version}, this build reads {PCE_FORMAT_VERSION}"),
        });
    }
    let flags = u32_at(12);
    let id_len = u32_at(16) as usize;
    if id_len > MAX_ID_LEN {
        return Err(bad("circuit id length out of range"));
    }
    let counts = Counts {
        num_inputs: u64_at(24),
        num_aux: u64_at(32),
        num_constraints: u64_at(40),
        num_coeffs: u64_at(48),
        nnz: [u64_at(56), u64_at(64), u64_at(72)],
    };
    let fingerprint: [u8; 32] = fixed[80..112].try_into().expect("32 bytes");
    let checksum: [u8; 32] = fixed[112..144].try_into().expect("32 bytes");
    let mut id = vec![0u8; id_len];
    r.read_exact(&mut id).map_err(|_| bad("truncated header"))?;
    let circuit_id = String::from_utf8(id).map_err(|_| bad("circuit id is not UTF-8"))?;
    Ok(PceHeader {
        version,
        circuit_id,
        num_inputs: counts.num_inputs,
        num_aux: counts.num_aux,
        num_constraints: counts.num_constraints,
        fingerprint,
        checksum,
        counts,
        flags,
        raw: fixed,
    })
}

struct BodyReader<'p, R> {
    r: R,
    hasher: blake3::Hasher,
    path: &'p Path,
}

impl<R: Read> BodyReader<'_, R> {
    /// Reads `n` plain-old-data values. The file length was checked against the counts first,
    /// so `n` never exceeds what the file holds.
    fn read_vec<T: bytemuck::Pod + bytemuck::Zeroable>(&mut self, n: u64) -> Result<Vec<T>> {
        let mut v = vec![T::zeroed(); n as usize];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut v);
        self.r
            .read_exact(bytes)
            .map_err(|e| Error::io(self.path, e))?;
        self.hasher.update(bytes);
        Ok(v)
    }
}
