//! Generates the cuzk.v1 message types, server and client from proto/cuzk/v1/proving.proto.

fn main() {
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("vendored protoc for this host");
    std::env::set_var("PROTOC", protoc);
    println!("cargo:rerun-if-changed=../../proto/cuzk/v1/proving.proto");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    tonic_build::configure()
        .file_descriptor_set_path(out.join("cuzk_v1_descriptor.bin"))
        .build_server(true)
        .build_client(true)
        .compile_protos(&["../../proto/cuzk/v1/proving.proto"], &["../../proto"])
        .expect("proto/cuzk/v1/proving.proto compiles");
}
