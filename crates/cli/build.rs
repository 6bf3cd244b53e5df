//! Records the target triple zkrv is built for (`ZKRV_BUILD_TARGET`): `zkrv new --lang rust` writes it into
//! the template's host helper config (host/.cargo/config.toml), so that the helper builds for this machine.
fn main() {
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    println!("cargo:rustc-env=ZKRV_BUILD_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
