//! Shared 2 KiB fixtures for the Filecoin tests.
//!
//! CI generates them once (`cuzk fixtures`) and names the folder in `CUZK_TEST_FIXTURES`;
//! otherwise the first test to need them generates them under `target/`
//! ([`ensure_fixtures_locked`]: concurrent test processes wait instead of generating twice).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use cuzk_filecoin::fixtures::{
    bind_fixture_dirs, ensure_fixtures_locked, fixture_store, Manifest, Quiet,
};
use cuzk_filecoin::{CircuitStore, SectorSize};

pub struct Fixtures {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub store: CircuitStore,
}

fn fixture_dir() -> PathBuf {
    match std::env::var_os("CUZK_TEST_FIXTURES") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/cuzk-test-fixtures"),
    }
}

pub fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let dir = fixture_dir();
        bind_fixture_dirs(&dir).expect("bind dirs");
        let manifest =
            ensure_fixtures_locked(&dir, SectorSize::S2KiB, &Quiet, Duration::from_secs(1800))
                .expect("fixtures");
        let store = fixture_store(&dir);
        Fixtures {
            dir,
            manifest,
            store,
        }
    })
}
