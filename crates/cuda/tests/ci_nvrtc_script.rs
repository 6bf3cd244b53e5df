//! scripts/ci-nvrtc.sh (run by scripts/test.sh on every CI run) is quiet and idempotent: the first run
//! installs NVRTC with pip, a re-run does not call pip at all, a directory left by an older or interrupted
//! install is repaired without pip's "Target directory ... already exists" warning (pip never installs into
//! an existing target), other files in the directory are kept, and a failed install changes nothing.
//! Hermetic: `python3` is a stand-in on PATH that records its calls and behaves as `pip install --target`
//! does (including that warning), so no network is used.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ci-nvrtc.sh")
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zkrv-ci-nvrtc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fake `python3 -m pip install ... --target DIR PKG`: appends its arguments to `$FAKE_PIP_LOG`, warns
/// as pip does when DIR already holds `nvidia/`, fails when `$FAKE_PIP_FAIL` is set, else installs a
/// stand-in libnvrtc.
const FAKE_PYTHON: &str = r#"#!/bin/sh
echo "$*" >> "$FAKE_PIP_LOG"
target=""
while [ $# -gt 0 ]; do
    if [ "$1" = "--target" ]; then target=$2; fi
    shift
done
[ -n "$target" ] || { echo "fake pip: no --target" >&2; exit 2; }
if [ -n "${FAKE_PIP_FAIL:-}" ]; then echo "fake pip: network unreachable" >&2; exit 1; fi
if [ -e "$target/nvidia" ]; then
    echo "WARNING: Target directory $target/nvidia already exists. Specify --upgrade to force replacement." >&2
fi
mkdir -p "$target/nvidia/cu13/lib" "$target/nvidia_cuda_nvrtc-13.0.88.dist-info"
echo lib > "$target/nvidia/cu13/lib/libnvrtc.so.13"
"#;

struct Fake {
    bin: PathBuf,
    log: PathBuf,
}

impl Fake {
    fn new(root: &Path) -> Fake {
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let py = bin.join("python3");
        std::fs::write(&py, FAKE_PYTHON).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
        Fake {
            bin,
            log: root.join("pip.log"),
        }
    }

    fn run(&self, nvrtc_dir: &Path, fail: bool) -> Output {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = Command::new("bash");
        c.arg(script())
            .env("PATH", path)
            .env("NVRTC_DIR", nvrtc_dir)
            .env("FAKE_PIP_LOG", &self.log)
            .env_remove("FAKE_PIP_FAIL");
        if fail {
            c.env("FAKE_PIP_FAIL", "1");
        }
        c.output().unwrap()
    }

    fn pip_calls(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Leftover temporary install directories next to `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{name}.tmp.")))
        .collect()
}

#[test]
fn reruns_are_quiet_and_idempotent() {
    let root = tempdir("rerun");
    let fake = Fake::new(&root);
    let dir = root.join("nvrtc");
    let want = format!(
        "export LD_LIBRARY_PATH={}/nvidia/cu13/lib${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\n",
        dir.display()
    );
    // First run: one pip install; stdout is only the line test.sh evaluates, nothing on stderr.
    let out = fake.run(&dir, false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), want);
    assert_eq!(text(&out.stderr), "");
    assert_eq!(fake.pip_calls(), 1);
    assert!(dir.join("nvidia/cu13/lib/libnvrtc.so.13").exists());
    // Re-runs: no pip, same output, nothing on stderr.
    for _ in 0..2 {
        let out = fake.run(&dir, false);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), want);
        assert_eq!(text(&out.stderr), "");
    }
    assert_eq!(fake.pip_calls(), 1, "a re-run called pip");
    assert_eq!(leftovers(&dir), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_stale_install_is_repaired_without_a_warning_and_a_failure_changes_nothing() {
    let root = tempdir("stale");
    let fake = Fake::new(&root);
    // An older install (another CUDA major) and a file of the user's: nvidia/ exists, libnvrtc 13 does not.
    let dir = root.join("nvrtc");
    std::fs::create_dir_all(dir.join("nvidia/cu12/lib")).unwrap();
    std::fs::write(dir.join("keep.txt"), "mine").unwrap();
    // A failed install: an error, and the directory as it was.
    let out = fake.run(&dir, true);
    assert!(!out.status.success());
    assert!(dir.join("nvidia/cu12/lib").is_dir());
    assert!(!dir.join("nvidia/cu13").exists());
    assert_eq!(leftovers(&dir), Vec::<String>::new());
    // Then a working one: installed, no pip warning, the user's file kept.
    let out = fake.run(&dir, false);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("already exists"), "pip warned: {err}");
    assert_eq!(err, "");
    assert!(dir.join("nvidia/cu13/lib/libnvrtc.so.13").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(leftovers(&dir), Vec::<String>::new());
    assert_eq!(fake.pip_calls(), 2);
    let _ = std::fs::remove_dir_all(&root);
}
