//! Findings of the second new-user pass: `verify --json` of a segmented proof, `zkrv new` names and
//! parents, `-` where it is not stdin, `zkrv security` below the smallest table.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const GUESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../guests/bin");

fn zkrv_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zkrv"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("zkrv runs")
}

/// A fresh empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zkrv-nu2-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn exitcode_elf() -> Option<String> {
    let p = format!("{GUESTS}/exitcode.elf");
    if Path::new(&p).exists() {
        Some(p)
    } else {
        eprintln!("skipped: {p} is absent");
        None
    }
}

fn verify_json(dir: &Path, proof: &str, elf: &str) -> serde_json::Value {
    let o = zkrv_in(dir, &["verify", proof, elf, "--json", "--any-exit-code"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

/// `verify --json` says zero knowledge only for a zk proof of one segment; a segmented proof has public
/// boundaries (and zk segments).
#[test]
fn verify_json_zero_knowledge_is_false_for_segmented_proofs() {
    let Some(elf) = exitcode_elf() else { return };
    let d = scratch("json");
    for (name, extra) in [
        ("one", &[][..]),
        (
            "seg",
            &["--segment-cycles", "128", "--public-segment-boundaries"][..],
        ),
    ] {
        let proof = format!("{name}.zkrv");
        let mut args = vec![
            "prove",
            elf.as_str(),
            "-o",
            proof.as_str(),
            "--backend",
            "cpu",
        ];
        args.extend(extra);
        let o = zkrv_in(&d, &args);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let j = verify_json(&d, &proof, &elf);
        let segmented = name == "seg";
        assert_eq!(j["segments"].as_u64().unwrap() > 1, segmented, "{j}");
        assert_eq!(j["zero_knowledge"], !segmented, "{name}: {j}");
        assert_eq!(j["boundaries_public"], segmented, "{name}: {j}");
        assert_eq!(j["segments_zero_knowledge"], true, "{name}: {j}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A Rust guest named after the runtime package (or another name that cannot build) is refused up front;
/// the C template has no such package.
#[test]
fn new_refuses_reserved_rust_names() {
    let d = scratch("reserved");
    for name in ["zkrv-guest", "zkrv_guest", "serde", "core"] {
        let o = zkrv_in(&d, &["new", name, "--lang", "rust"]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let e = stderr(&o);
        assert!(e.contains("cannot be used for a Rust guest"), "{name}: {e}");
        assert!(!d.join(name).exists(), "{name}: nothing created");
    }
    let o = zkrv_in(&d, &["new", "zkrv-guest", "--lang", "c"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// A parent that is a regular file is named as not a directory (not as missing).
#[test]
fn new_parent_that_is_a_file() {
    let d = scratch("parentfile");
    std::fs::write(d.join("filex"), b"x").unwrap();
    let o = zkrv_in(&d, &["new", "filex/abc"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("filex is not a directory"), "{e}");
    assert!(!e.contains("does not exist"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `-` is stdin only for `--input`: elsewhere it is refused with a hint, and no file named `-` is read or
/// written.
#[test]
fn dash_is_refused_outside_input() {
    let Some(elf) = exitcode_elf() else { return };
    let d = scratch("dash");
    let cases: [(&[&str], &str); 6] = [
        (&["prove", &elf, "-o", "-"], "-o `-`"),
        (&["verify", "-", &elf], "the proof file `-`"),
        (&["verify", "x.zkrv", "-"], "the guest ELF `-`"),
        (
            &["verify", "x.zkrv", &elf, "--expect-output", "-"],
            "--expect-output `-`",
        ),
        (
            &["verify", "x.zkrv", &elf, "--output-file", "-"],
            "--output-file `-`",
        ),
        (&["program-id", "-"], "the guest ELF `-`"),
    ];
    // A file named `-` that must be neither read (as a proof, ELF or expected output) nor overwritten.
    std::fs::write(d.join("-"), b"not read").unwrap();
    for (args, what) in cases {
        let o = zkrv_in(&d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(what) && e.contains("only for --input"),
            "{args:?}: {e}"
        );
        assert_eq!(std::fs::read(d.join("-")).unwrap(), b"not read");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `zkrv security` at a height below the preset's smallest zk table shows that table's height, with a note.
#[test]
fn security_log_height_below_the_smallest_table() {
    let d = scratch("sec");
    let o = zkrv_in(&d, &["security", "--security", "128", "--log-height", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("every table 2^8 rows"), "{out}");
    assert!(stderr(&o).contains("at least 2^8 rows"), "{}", stderr(&o));
    // Without zk the smallest table is 8 rows: 2^3.
    let o = zkrv_in(&d, &["security", "--no-zk", "--log-height", "2"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("every table 2^3 rows"));
    // A height proofs do have is shown as given, without a note.
    let o = zkrv_in(&d, &["security", "--log-height", "12"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("every table 2^12 rows"));
    assert!(!stderr(&o).contains("note"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}
