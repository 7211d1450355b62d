//! Inline arithmetic on the BLS12-381 scalar field for hot loops (the NTT).
//!
//! [`Fr`] holds the same four little-endian Montgomery limbs (R = 2^256) that blst and blstrs
//! use, so converting to and from [`blstrs::Scalar`] copies limbs and computes nothing.
//! blstrs' operations are out-of-line calls into blst; these are small enough to inline into
//! a butterfly. Multiplication is CIOS Montgomery in the form that needs no extra carry word,
//! valid because the modulus' top limb is below 2^63 - 1.

use blstrs::Scalar;

/// The scalar field modulus r, little-endian limbs.
const MODULUS: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// -r^-1 mod 2^64.
const INV: u64 = 0xffff_fffe_ffff_ffff;

/// A field element in Montgomery form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fr(pub(crate) [u64; 4]);

#[inline(always)]
fn mac(a: u64, b: u64, c: u64, carry: u64) -> (u64, u64) {
    let t = u128::from(a) + u128::from(b) * u128::from(c) + u128::from(carry);
    (t as u64, (t >> 64) as u64)
}

#[inline(always)]
fn adc(a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = u128::from(a) + u128::from(b) + u128::from(carry);
    (t as u64, (t >> 64) as u64)
}

#[inline(always)]
fn sbb(a: u64, b: u64, borrow: u64) -> (u64, u64) {
    let t = u128::from(a).wrapping_sub(u128::from(b) + u128::from(borrow));
    (t as u64, (t >> 127) as u64)
}

/// `x - r` when `x >= r`, else `x` (for `x < 2r`).
#[inline(always)]
fn reduce_once(x: [u64; 4]) -> [u64; 4] {
    let (d0, b) = sbb(x[0], MODULUS[0], 0);
    let (d1, b) = sbb(x[1], MODULUS[1], b);
    let (d2, b) = sbb(x[2], MODULUS[2], b);
    let (d3, b) = sbb(x[3], MODULUS[3], b);
    if b == 0 {
        [d0, d1, d2, d3]
    } else {
        x
    }
}

impl Fr {
    pub(crate) const ZERO: Fr = Fr([0; 4]);

    #[inline(always)]
    pub(crate) fn from_scalar(s: &Scalar) -> Fr {
        Fr(blst::blst_fr::from(*s).l)
    }

    #[inline(always)]
    pub(crate) fn to_scalar(self) -> Scalar {
        Scalar::from(blst::blst_fr { l: self.0 })
    }

    #[inline(always)]
    pub(crate) fn add(self, o: Fr) -> Fr {
        let (a, b) = (self.0, o.0);
        let (s0, c) = adc(a[0], b[0], 0);
        let (s1, c) = adc(a[1], b[1], c);
        let (s2, c) = adc(a[2], b[2], c);
        let (s3, _) = adc(a[3], b[3], c);
        // Both inputs are below r < 2^255, so the sum fits in 256 bits.
        Fr(reduce_once([s0, s1, s2, s3]))
    }

    #[inline(always)]
    pub(crate) fn sub(self, o: Fr) -> Fr {
        let (a, b) = (self.0, o.0);
        let (d0, br) = sbb(a[0], b[0], 0);
        let (d1, br) = sbb(a[1], b[1], br);
        let (d2, br) = sbb(a[2], b[2], br);
        let (d3, br) = sbb(a[3], b[3], br);
        if br == 0 {
            return Fr([d0, d1, d2, d3]);
        }
        let (s0, c) = adc(d0, MODULUS[0], 0);
        let (s1, c) = adc(d1, MODULUS[1], c);
        let (s2, c) = adc(d2, MODULUS[2], c);
        let (s3, _) = adc(d3, MODULUS[3], c);
        Fr([s0, s1, s2, s3])
    }

    #[inline(always)]
    pub(crate) fn neg(self) -> Fr {
        Fr::ZERO.sub(self)
    }

    #[inline(always)]
    pub(crate) fn mul(self, o: Fr) -> Fr {
        let (a, b) = (self.0, o.0);
        let mut t = [0u64; 4];
        for bi in b {
            let (t0, mut c) = mac(t[0], a[0], bi, 0);
            let m = t0.wrapping_mul(INV);
            let (_, mut c2) = mac(t0, m, MODULUS[0], 0);
            for j in 1..4 {
                let (x, c_) = mac(t[j], a[j], bi, c);
                c = c_;
                let (y, c2_) = mac(x, m, MODULUS[j], c2);
                c2 = c2_;
                t[j - 1] = y;
            }
            t[3] = c.wrapping_add(c2);
        }
        Fr(reduce_once(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn agrees_with_blstrs() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut vals: Vec<Scalar> = (0..2000).map(|_| Scalar::random(&mut rng)).collect();
        vals.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, -Scalar::from(2u64)]);
        for w in vals.windows(2) {
            let (x, y) = (w[0], w[1]);
            let (fx, fy) = (Fr::from_scalar(&x), Fr::from_scalar(&y));
            assert_eq!(fx.to_scalar(), x);
            assert_eq!(fx.mul(fy).to_scalar(), x * y);
            assert_eq!(fx.add(fy).to_scalar(), x + y);
            assert_eq!(fx.sub(fy).to_scalar(), x - y);
            assert_eq!(fy.sub(fx).to_scalar(), y - x);
            assert_eq!(fx.neg().to_scalar(), -x);
            assert_eq!(fx.mul(fx).to_scalar(), x.square());
        }
    }
}
