//! Compiles the CUDA sources when the `cuda` feature is on.
//!
//! Target architectures come from CUZK_CUDA_ARCHS (comma-separated compute capabilities,
//! default "80,86,89,90,120"): SASS for each, plus PTX for the newest so later cards can JIT.
//! sppark's own build flags emit no sm_90 code, so the list is always ours.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=cuda");
    println!("cargo:rerun-if-env-changed=CUZK_CUDA_ARCHS");
    println!("cargo:rerun-if-env-changed=NVCC");
    if env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let sppark = env::var("DEP_SPPARK_ROOT").expect("sppark exports its header root");
    let blst = env::var("DEP_BLST_C_SRC").expect("blst exports its source root");
    let archs = env::var("CUZK_CUDA_ARCHS").unwrap_or_else(|_| "80,86,89,90,120".into());
    let archs: Vec<u32> = archs
        .split(',')
        .map(|a| a.trim().trim_start_matches("sm_"))
        .filter(|a| !a.is_empty())
        .map(|a| {
            a.parse()
                .unwrap_or_else(|_| panic!("CUZK_CUDA_ARCHS: {a:?} is not a compute capability"))
        })
        .collect();
    assert!(!archs.is_empty(), "CUZK_CUDA_ARCHS names no architecture");

    let mut b = cc::Build::new();
    // Never device-debug (-G) code, whatever the profile: it runs orders of magnitude slower.
    b.cuda(true).cudart("static").debug(false).opt_level(3);
    b.include(&sppark)
        .include(&blst)
        .include("cuda")
        .define("FEATURE_BLS12_381", None)
        .define("TAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE", None)
        .flag("-std=c++17")
        .flag("--threads=0")
        .flag("-Xcompiler")
        .flag("-Wno-unused-function,-Wno-subobject-linkage");
    if blst_uses_adx() {
        // blst's headers name its ADX assembly routines only when __ADX__ is defined, and
        // blst compiled itself with ADX: host code calling into it must agree.
        b.define("__ADX__", None);
    }
    for a in &archs {
        b.flag(format!("-gencode=arch=compute_{a},code=sm_{a}"));
    }
    let newest = archs.iter().max().expect("nonempty");
    b.flag(format!(
        "-gencode=arch=compute_{newest},code=compute_{newest}"
    ));
    for f in ["device", "fixed_base", "msm", "ntt"] {
        b.file(format!("cuda/{f}.cu"));
    }
    b.compile("cuzk_cuda");
}

/// The same decision blst's build script makes (without its `portable`/`force-adx` features,
/// which this workspace does not enable): ADX when the target enables it or the build host
/// has it.
fn blst_uses_adx() -> bool {
    if env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64") {
        return false;
    }
    let target_features = env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    if target_features.split(',').any(|f| f == "adx") {
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("adx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
