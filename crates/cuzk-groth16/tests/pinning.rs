//! An assignment's a, b and c are pinned through the backend's pinner once, only when large
//! enough, and unpinned when the assignment is dropped.

use std::sync::{Arc, Mutex};

use blstrs::Scalar;
use cuzk_groth16::{Density, HostPinner, PinnedRegion, ProvingAssignment, Witness, PIN_MIN_BYTES};
use ff::Field;

#[derive(Debug, Default)]
struct Log {
    pinned: Vec<(usize, usize)>,
    unpinned: Vec<usize>,
}

#[derive(Debug, Default)]
struct FakePinner(Arc<Mutex<Log>>);

#[derive(Debug)]
struct Region(usize, Arc<Mutex<Log>>);

impl PinnedRegion for Region {}

impl Drop for Region {
    fn drop(&mut self) {
        self.1.lock().unwrap().unpinned.push(self.0);
    }
}

impl HostPinner for FakePinner {
    fn pin(&self, addr: usize, bytes: usize) -> Option<Box<dyn PinnedRegion>> {
        self.0.lock().unwrap().pinned.push((addr, bytes));
        Some(Box::new(Region(addr, self.0.clone())))
    }
}

fn assignment(n: usize) -> ProvingAssignment {
    ProvingAssignment::new(
        Witness {
            inputs: vec![Scalar::ONE],
            aux: vec![],
        },
        vec![Scalar::ONE; n],
        vec![Scalar::ZERO; n],
        vec![Scalar::ONE; n],
        Arc::new(Density::default()),
    )
}

#[test]
fn large_evaluations_are_pinned_once_and_unpinned_on_drop() {
    let n = PIN_MIN_BYTES / 32;
    let mut pa = assignment(n);
    let pinner = FakePinner::default();
    assert_eq!(pa.pin_evaluations(&pinner), 3);
    assert_eq!(pa.pin_evaluations(&pinner), 3, "pinned once");
    assert!(pa.is_pinned());
    let want: Vec<(usize, usize)> = [&pa.a, &pa.b, &pa.c]
        .iter()
        .map(|v| (v.as_ptr() as usize, n * 32))
        .collect();
    assert_eq!(pinner.0.lock().unwrap().pinned, want);
    let copy = pa.clone();
    drop(copy);
    assert!(
        pinner.0.lock().unwrap().unpinned.is_empty(),
        "a copy holds no pins"
    );
    drop(pa);
    let log = pinner.0.lock().unwrap();
    let mut unpinned = log.unpinned.clone();
    unpinned.sort_unstable();
    let mut addrs: Vec<usize> = want.iter().map(|w| w.0).collect();
    addrs.sort_unstable();
    assert_eq!(unpinned, addrs);
}

#[test]
fn small_evaluations_stay_pageable() {
    let mut pa = assignment(PIN_MIN_BYTES / 32 - 1);
    let pinner = FakePinner::default();
    assert_eq!(pa.pin_evaluations(&pinner), 0);
    assert!(!pa.is_pinned());
    assert!(pinner.0.lock().unwrap().pinned.is_empty());
}
