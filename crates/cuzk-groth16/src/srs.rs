//! Groth16 parameters (the SRS) in Filecoin's / bellperson's file format.
//!
//! ```text
//! .vk      alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 (uncompressed points)
//!          ic: u32 count (big-endian), then that many G1 points
//! .params  the verifying key, then h, l, a, b_g1 (G1) and b_g2 (G2), each a u32 count
//!          (big-endian) followed by that many uncompressed points
//! ```
//!
//! Files are read with positional reads from many threads at once (one section chunk per
//! task), so loading runs at storage speed without mapping the file. Points are checked to
//! be on the curve; subgroup checks are optional ([`PointCheck`]). A point at infinity in a
//! query is refused, as bellperson refuses it.
//!
//! The prover reads parameters through [`ParameterSource`], so host-resident, pinned or
//! device-resident sources plug in without touching it.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::OnceLock;

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::msm::{
    g1_affine, g1_base, g1_base_bytes, g2_affine, g2_base, g2_base_bytes, G1Base, G2Base,
};
use crate::pin::{HostPinner, PinnedRegion};

const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;
const POINTS_PER_TASK: usize = 1 << 12;

/// How thoroughly points read from a file are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PointCheck {
    /// On the curve (blst always checks this when decoding).
    #[default]
    OnCurve,
    /// On the curve and in the prime-order subgroup (slower; for untrusted files).
    Subgroup,
}

/// A Groth16 verifying key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// alpha in G1.
    pub alpha_g1: G1Affine,
    /// beta in G1.
    pub beta_g1: G1Affine,
    /// beta in G2.
    pub beta_g2: G2Affine,
    /// gamma in G2.
    pub gamma_g2: G2Affine,
    /// delta in G1.
    pub delta_g1: G1Affine,
    /// delta in G2.
    pub delta_g2: G2Affine,
    /// One point per public input, the constant one first.
    pub ic: Vec<G1Affine>,
}

/// Read access to a circuit's parameters, as the prover needs them.
pub trait ParameterSource: Send + Sync {
    /// The verifying key.
    fn vk(&self) -> &VerifyingKey;
    /// H query: `n - 1` points for a domain of `n`.
    fn h(&self) -> &[G1Base];
    /// L query: one point per aux variable.
    fn l(&self) -> &[G1Base];
    /// A query: all inputs, then the aux variables present in A.
    fn a(&self) -> &[G1Base];
    /// B query in G1: inputs present in B, then aux present in B.
    fn b_g1(&self) -> &[G1Base];
    /// B query in G2, same layout as `b_g1`.
    fn b_g2(&self) -> &[G2Base];
    /// An identity for these exact points, unique within the process, so a backend may keep
    /// a copy (on a device) and reuse it for later proofs; None: do not keep copies.
    fn source_id(&self) -> Option<u64> {
        None
    }
    /// Pins the five queries' host memory with `pinner` for as long as this source lives, so
    /// a device streaming them copies at the bus's speed; true when they are pinned (by this
    /// call or an earlier one). The first call costs time in proportion to the bytes (about
    /// 0.05 s a GiB); a source that cannot keep its memory in place returns false.
    fn pin_host(&self, _pinner: &dyn HostPinner) -> bool {
        false
    }
}

/// Parameters held in host memory.
///
/// Each value (each clone too) has its own [`ParameterSource::source_id`]: a backend that
/// keeps device copies keys them by it. The queries are read-only once built (read them
/// through [`ParameterSource`]), so their memory stays in place while pinned.
#[derive(Debug)]
pub struct Parameters {
    // Dropped first (field order): the queries are unpinned before their memory is freed.
    pins: OnceLock<Vec<Box<dyn PinnedRegion>>>,
    /// The verifying key.
    pub vk: VerifyingKey,
    h: Vec<G1Base>,
    l: Vec<G1Base>,
    a: Vec<G1Base>,
    b_g1: Vec<G1Base>,
    b_g2: Vec<G2Base>,
    uid: u64,
}

fn next_uid() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Parameters {
    /// Parameters from their parts.
    pub fn new(
        vk: VerifyingKey,
        h: Vec<G1Base>,
        l: Vec<G1Base>,
        a: Vec<G1Base>,
        b_g1: Vec<G1Base>,
        b_g2: Vec<G2Base>,
    ) -> Self {
        Parameters {
            pins: OnceLock::new(),
            vk,
            h,
            l,
            a,
            b_g1,
            b_g2,
            uid: next_uid(),
        }
    }
}

impl Clone for Parameters {
    fn clone(&self) -> Self {
        Parameters::new(
            self.vk.clone(),
            self.h.clone(),
            self.l.clone(),
            self.a.clone(),
            self.b_g1.clone(),
            self.b_g2.clone(),
        )
    }
}

impl ParameterSource for Parameters {
    fn vk(&self) -> &VerifyingKey {
        &self.vk
    }
    fn h(&self) -> &[G1Base] {
        &self.h
    }
    fn l(&self) -> &[G1Base] {
        &self.l
    }
    fn a(&self) -> &[G1Base] {
        &self.a
    }
    fn b_g1(&self) -> &[G1Base] {
        &self.b_g1
    }
    fn b_g2(&self) -> &[G2Base] {
        &self.b_g2
    }
    fn source_id(&self) -> Option<u64> {
        Some(self.uid)
    }
    fn pin_host(&self, pinner: &dyn HostPinner) -> bool {
        fn range<T>(v: &[T]) -> (usize, usize) {
            (v.as_ptr() as usize, size_of_val(v))
        }
        let pins = self.pins.get_or_init(|| {
            let ranges = [
                range(&self.h),
                range(&self.l),
                range(&self.a),
                range(&self.b_g1),
                range(&self.b_g2),
            ];
            let mut pins = Vec::new();
            for (addr, bytes) in ranges.into_iter().filter(|r| r.1 > 0) {
                match pinner.pin(addr, bytes) {
                    Some(p) => pins.push(p),
                    // All or none: the ones pinned so far are unpinned as `pins` drops.
                    None => return Vec::new(),
                }
            }
            pins
        });
        !pins.is_empty()
    }
}

/// Byte sources read at offsets from several threads.
trait ReadAt: Sync {
    fn len(&self) -> u64;
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl ReadAt for (File, u64) {
    fn len(&self) -> u64 {
        self.1
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }
}

impl ReadAt for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let s = usize::try_from(offset)
            .ok()
            .and_then(|o| self.get(o..o.checked_add(buf.len())?))
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(s);
        Ok(())
    }
}

/// Decoding one kind of point.
trait Point: Sized + Send + Copy + Default {
    const BYTES: usize;
    fn decode(bytes: &[u8], check: PointCheck) -> Option<Self>;
}

impl Point for G1Base {
    const BYTES: usize = G1_BYTES;
    fn decode(bytes: &[u8], check: PointCheck) -> Option<Self> {
        let b: &[u8; G1_BYTES] = bytes.try_into().ok()?;
        let p: Option<G1Affine> = match check {
            PointCheck::OnCurve => G1Affine::from_uncompressed_unchecked(b).into(),
            PointCheck::Subgroup => G1Affine::from_uncompressed(b).into(),
        };
        p.filter(|p| !bool::from(p.is_identity()))
            .map(|p| g1_base(&p))
    }
}

impl Point for G2Base {
    const BYTES: usize = G2_BYTES;
    fn decode(bytes: &[u8], check: PointCheck) -> Option<Self> {
        let b: &[u8; G2_BYTES] = bytes.try_into().ok()?;
        let p: Option<G2Affine> = match check {
            PointCheck::OnCurve => G2Affine::from_uncompressed_unchecked(b).into(),
            PointCheck::Subgroup => G2Affine::from_uncompressed(b).into(),
        };
        p.filter(|p| !bool::from(p.is_identity()))
            .map(|p| g2_base(&p))
    }
}

/// A reader of one file, tracking the offset of the next section.
struct SectionReader<'a, S: ReadAt + ?Sized> {
    src: &'a S,
    offset: u64,
    name: &'a Path,
    check: PointCheck,
}

impl<S: ReadAt + ?Sized> SectionReader<'_, S> {
    fn err(&self, reason: String) -> Error {
        Error::ParamsFile {
            path: self.name.into(),
            reason,
        }
    }

    fn bytes(&mut self, n: usize, what: &str) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; n];
        self.src.read_at(&mut buf, self.offset).map_err(|_| {
            self.err(format!(
                "truncated in {what} at byte {} (file is {} bytes)",
                self.offset,
                self.src.len()
            ))
        })?;
        self.offset += n as u64;
        Ok(buf)
    }

    fn count(&mut self, what: &str) -> Result<usize> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
    }

    fn one<P: Point>(&mut self, what: &str) -> Result<P> {
        // Verifying-key points are few: always fully checked.
        let b = self.bytes(P::BYTES, what)?;
        P::decode(&b, PointCheck::Subgroup)
            .ok_or_else(|| self.err(format!("{what} is not a valid point")))
    }

    /// Reads a length-prefixed section of points in parallel.
    fn section<P: Point>(&mut self, what: &str) -> Result<Vec<P>> {
        let n = self.count(what)?;
        let start = self.offset;
        let end = start + (n as u64) * P::BYTES as u64;
        if end > self.src.len() {
            return Err(self.err(format!(
                "truncated: section {what} announces {n} points ending at byte {end}, the file has {}",
                self.src.len()
            )));
        }
        let mut out = vec![P::default(); n];
        let check = self.check;
        let src = self.src;
        out.par_chunks_mut(POINTS_PER_TASK)
            .enumerate()
            .try_for_each(|(ci, chunk)| -> std::result::Result<(), String> {
                let first = ci * POINTS_PER_TASK;
                let mut buf = vec![0u8; chunk.len() * P::BYTES];
                src.read_at(&mut buf, start + (first * P::BYTES) as u64)
                    .map_err(|e| format!("read failed in section {what}: {e}"))?;
                for (k, (slot, b)) in chunk.iter_mut().zip(buf.chunks_exact(P::BYTES)).enumerate() {
                    *slot = P::decode(b, check).ok_or_else(|| {
                        format!(
                            "section {what}, point {}: not a valid point (or the point at infinity)",
                            first + k
                        )
                    })?;
                }
                Ok(())
            })
            .map_err(|e| self.err(e))?;
        self.offset = end;
        Ok(out)
    }

    fn vk(&mut self) -> Result<VerifyingKey> {
        let alpha_g1 = g1_affine(&self.one::<G1Base>("vk.alpha_g1")?);
        let beta_g1 = g1_affine(&self.one::<G1Base>("vk.beta_g1")?);
        let beta_g2 = g2_affine(&self.one::<G2Base>("vk.beta_g2")?);
        let gamma_g2 = g2_affine(&self.one::<G2Base>("vk.gamma_g2")?);
        let delta_g1 = g1_affine(&self.one::<G1Base>("vk.delta_g1")?);
        let delta_g2 = g2_affine(&self.one::<G2Base>("vk.delta_g2")?);
        let n = self.count("vk.ic")?;
        if (n as u64).saturating_mul(G1_BYTES as u64)
            > self.src.len() - self.offset.min(self.src.len())
        {
            return Err(self.err(format!("truncated: vk.ic announces {n} points")));
        }
        let ic = (0..n)
            .map(|_| self.one::<G1Base>("vk.ic").map(|p| g1_affine(&p)))
            .collect::<Result<Vec<_>>>()?;
        Ok(VerifyingKey {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic,
        })
    }

    fn expect_end(&self) -> Result<()> {
        if self.offset != self.src.len() {
            return Err(self.err(format!(
                "{} unexpected bytes after the last section",
                self.src.len() - self.offset
            )));
        }
        Ok(())
    }
}

fn read_params<S: ReadAt + ?Sized>(src: &S, name: &Path, check: PointCheck) -> Result<Parameters> {
    let mut r = SectionReader {
        src,
        offset: 0,
        name,
        check,
    };
    let vk = r.vk()?;
    let h = r.section("h")?;
    let l = r.section("l")?;
    let a = r.section("a")?;
    let b_g1 = r.section("b_g1")?;
    let b_g2 = r.section("b_g2")?;
    r.expect_end()?;
    Ok(Parameters::new(vk, h, l, a, b_g1, b_g2))
}

fn open(path: &Path) -> Result<(File, u64)> {
    let f = File::open(path).map_err(|e| Error::io(path, e))?;
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    Ok((f, len))
}

impl Parameters {
    /// Reads a `.params` file.
    pub fn read_file(path: &Path, check: PointCheck) -> Result<Self> {
        read_params(&open(path)?, path, check)
    }

    /// Reads parameters from bytes in the `.params` layout; `name` labels errors.
    pub fn read_bytes(bytes: &[u8], name: &str, check: PointCheck) -> Result<Self> {
        read_params(bytes, Path::new(name), check)
    }

    /// Writes the `.params` layout.
    pub fn write<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        self.vk.write(&mut w)?;
        write_section(&mut w, &self.h, |p| g1_base_bytes(p).to_vec())?;
        write_section(&mut w, &self.l, |p| g1_base_bytes(p).to_vec())?;
        write_section(&mut w, &self.a, |p| g1_base_bytes(p).to_vec())?;
        write_section(&mut w, &self.b_g1, |p| g1_base_bytes(p).to_vec())?;
        write_section(&mut w, &self.b_g2, |p| g2_base_bytes(p).to_vec())
    }
}

fn write_section<W: Write, P: Sync>(
    w: &mut W,
    points: &[P],
    encode: impl Fn(&P) -> Vec<u8> + Sync,
) -> std::io::Result<()> {
    let n = u32::try_from(points.len())
        .map_err(|_| std::io::Error::other("more than 2^32 points in one section"))?;
    w.write_all(&n.to_be_bytes())?;
    for chunk in points.chunks(POINTS_PER_TASK) {
        let bytes: Vec<u8> = chunk.par_iter().flat_map_iter(&encode).collect();
        w.write_all(&bytes)?;
    }
    Ok(())
}

impl VerifyingKey {
    /// Reads a `.vk` file.
    pub fn read_file(path: &Path) -> Result<Self> {
        let src = open(path)?;
        let mut r = SectionReader {
            src: &src,
            offset: 0,
            name: path,
            check: PointCheck::Subgroup,
        };
        let vk = r.vk()?;
        r.expect_end()?;
        Ok(vk)
    }

    /// Reads a verifying key from a stream (the `.vk` layout).
    pub fn read<R: Read>(mut r: R) -> Result<Self> {
        let mut bytes = Vec::new();
        r.read_to_end(&mut bytes)
            .map_err(|e| Error::Encoding(format!("reading verifying key: {e}")))?;
        let mut sr = SectionReader {
            src: bytes.as_slice(),
            offset: 0,
            name: Path::new("<verifying key>"),
            check: PointCheck::Subgroup,
        };
        let vk = sr.vk()?;
        sr.expect_end()?;
        Ok(vk)
    }

    /// Writes the `.vk` layout.
    pub fn write<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        w.write_all(&self.alpha_g1.to_uncompressed())?;
        w.write_all(&self.beta_g1.to_uncompressed())?;
        w.write_all(&self.beta_g2.to_uncompressed())?;
        w.write_all(&self.gamma_g2.to_uncompressed())?;
        w.write_all(&self.delta_g1.to_uncompressed())?;
        w.write_all(&self.delta_g2.to_uncompressed())?;
        let n = u32::try_from(self.ic.len())
            .map_err(|_| std::io::Error::other("more than 2^32 ic points"))?;
        w.write_all(&n.to_be_bytes())?;
        for p in &self.ic {
            w.write_all(&p.to_uncompressed())?;
        }
        Ok(())
    }
}
