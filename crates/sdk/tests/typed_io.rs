//! Typed I/O (docs/abi.md "Typed I/O") end to end: the host's `zkrv_sdk::io` against the guest runtime's
//! codec (`guests/rust/runtime/src/typed.rs`, compiled here on the host) byte for byte; the bundled Rust
//! `typedio` guest reading typed values the SDK wrote and committing values the SDK reads back, proved and
//! verified; malformed typed input exits 103; and the C runtime's fixed-width helpers (a C guest built here
//! when riscv64-unknown-elf-gcc is installed).

extern crate alloc;

/// The guest runtime's codec, the very file the guest compiles (it makes no system call).
#[path = "../../../guests/rust/runtime/src/typed.rs"]
#[allow(dead_code)]
mod guest_typed;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use zkrv_sdk::io::{DecodeError, EncodeError, Input, OutputReader};
use zkrv_sdk::{prove, Program, ProveOptions, Receipt};

/// The runtime's `READ_ERROR_EXIT_CODE` (guests/rust/runtime/src/lib.rs).
const READ_ERROR_EXIT_CODE: u32 = 103;

fn bundled(name: &str) -> Program {
    Program::load(format!(
        "{}/../../guests/bin/{name}.elf",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("bundled guest loads")
}

/// A reader over `bytes` with the contract of the guest's `read_input`: fills the buffer unless the input
/// ends, returns the count.
fn slice_reader(bytes: &[u8]) -> impl FnMut(&mut [u8]) -> usize + '_ {
    let mut at = 0;
    move |buf: &mut [u8]| {
        let n = buf.len().min(bytes.len() - at);
        buf[..n].copy_from_slice(&bytes[at..at + n]);
        at += n;
        n
    }
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Shape {
    Unit,
    Circle(u32),
    Rect { w: i16, h: i16 },
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Record {
    id: u64,
    delta: i64,
    name: String,
    flags: Vec<bool>,
    shape: Shape,
    pair: (u8, i128),
    blob: Option<Vec<u8>>,
    float: f64,
}

/// xorshift64; the seed is printed so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Mostly small values (varint edge cases: 0, 127, 128, ...), sometimes full width.
    fn wide(&mut self) -> u64 {
        let v = self.next();
        match v % 4 {
            0 => v >> (v % 64),
            1 => (v >> 7) % 300,
            _ => v,
        }
    }
}

fn random_record(rng: &mut Rng) -> Record {
    let n = (rng.next() % 40) as usize;
    Record {
        id: rng.wide(),
        delta: rng.wide() as i64,
        name: (0..rng.next() % 20)
            .map(|i| ['a', 'ß', '€', '𝄞'][(i + rng.next() % 4) as usize % 4])
            .collect(),
        flags: (0..n).map(|_| rng.next() % 2 == 1).collect(),
        shape: match rng.next() % 3 {
            0 => Shape::Unit,
            1 => Shape::Circle(rng.wide() as u32),
            _ => Shape::Rect {
                w: rng.next() as i16,
                h: rng.next() as i16,
            },
        },
        pair: (
            rng.next() as u8,
            ((rng.wide() as i128) << 64) | rng.next() as i128,
        ),
        blob: (rng.next() % 2 == 1)
            .then(|| (0..rng.next() % 600).map(|_| rng.next() as u8).collect()),
        // Any bit pattern but a NaN (NaN != NaN would fail the round-trip comparison about once in 2^11 records).
        float: Some(f64::from_bits(rng.next()))
            .filter(|f| !f.is_nan())
            .unwrap_or(-0.0),
    }
}

/// `value` encoded by the SDK and by the guest runtime: the same bytes, and each side decodes the other's.
fn check_both_ways<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: &T) -> Vec<u8> {
    let host = Input::new().write(value).unwrap().into_bytes();
    let guest = guest_typed::encode_frame(value).unwrap();
    assert_eq!(host, guest, "frames of {value:?}");
    let decoded: T = guest_typed::read_value(slice_reader(&host)).unwrap();
    assert_eq!(&decoded, value);
    let mut r = OutputReader::new(&guest);
    assert_eq!(&r.read::<T>().unwrap(), value);
    r.finish().unwrap();
    host
}

#[test]
fn framing_is_identical_on_host_and_guest() {
    // The docs/abi.md example and hand-checked postcard encodings.
    assert_eq!(
        check_both_ways(&(100u64, "hi".to_string())),
        [4, 0, 0, 0, 0x64, 2, b'h', b'i']
    );
    assert_eq!(check_both_ways(&300u32), [2, 0, 0, 0, 0xac, 0x02]);
    assert_eq!(check_both_ways(&-1i64), [1, 0, 0, 0, 0x01]); // zigzag
    assert_eq!(check_both_ways(&()), [0, 0, 0, 0]);
    assert_eq!(
        check_both_ways(&u64::MAX),
        [10, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
    );
    check_both_ways(&Some(vec![
        Shape::Unit,
        Shape::Circle(7),
        Shape::Rect { w: -3, h: 4 },
    ]));
    check_both_ways(&String::from_utf8(vec![b'x'; 5000]).unwrap()); // more than one 4 KiB chunk
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("framing_is_identical_on_host_and_guest: seed {seed}");
    let mut rng = Rng(seed);
    let records: Vec<Record> = (0..200).map(|_| random_record(&mut rng)).collect();
    for r in &records {
        check_both_ways(r);
    }
    check_both_ways(&records);

    // A stream mixing frames and fixed-width values, read back in order on both sides.
    let stream = Input::new()
        .write(&records[0])
        .unwrap()
        .write_u64(0x0102_0304_0506_0708)
        .write(&records[1])
        .unwrap()
        .into_bytes();
    let mut read = slice_reader(&stream);
    let first: Record = guest_typed::read_value(&mut read).unwrap();
    let mut word = [0u8; 8];
    assert_eq!(read(&mut word), 8);
    let second: Record = guest_typed::read_value(&mut read).unwrap();
    assert_eq!(
        (first, u64::from_le_bytes(word), second),
        (
            records[0].clone(),
            0x0102_0304_0506_0708,
            records[1].clone()
        )
    );
}

#[test]
fn the_guest_decoder_rejects_malformed_frames() {
    use guest_typed::ReadError;
    let read = |b: &[u8]| guest_typed::read_value::<(u8, String)>(slice_reader(b));
    assert!(matches!(
        read(&[3, 0]),
        Err(ReadError::Truncated {
            header: true,
            want: 4,
            got: 2
        })
    ));
    // A corrupt length far beyond the input is a short input after what is there, not a 4 GiB allocation.
    assert!(matches!(
        read(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3]),
        Err(ReadError::Truncated {
            header: false,
            want: 0xffff_ffff,
            got: 3
        })
    ));
    // Invalid UTF-8 in the string.
    assert!(matches!(
        read(&[4, 0, 0, 0, 7, 2, 0xc3, 0x28]),
        Err(ReadError::Decode(postcard::Error::DeserializeBadUtf8))
    ));
    // The frame ends inside the value.
    assert!(matches!(
        read(&[3, 0, 0, 0, 7, 5, b'a']),
        Err(ReadError::Decode(postcard::Error::DeserializeUnexpectedEnd))
    ));
    // The value ends before its frame does.
    assert!(matches!(
        read(&[5, 0, 0, 0, 7, 1, b'a', 9, 9]),
        Err(ReadError::Trailing { left: 2 })
    ));
    assert_eq!(
        read(&[3, 0, 0, 0, 7, 1, b'a']).unwrap(),
        (7, "a".to_string())
    );
    let msg = read(&[1, 0]).unwrap_err().to_string();
    assert_eq!(
        msg,
        "the input ends before the value's frame: 4 length bytes expected, 2 left"
    );
}

#[test]
fn the_host_reader_rejects_malformed_output_and_does_not_advance() {
    let bytes = [
        9, 9, 3, 0, 0, 0, 7, 1, b'a', 5, 0, 0, 0, 7, 1, b'a', 0, 0, 6, 0, 0, 0, 1,
    ];
    let mut r = OutputReader::new(&bytes);
    assert_eq!(r.read_raw(2).unwrap(), [9, 9]);
    assert_eq!(r.read::<(u8, String)>().unwrap(), (7, "a".into()));
    let at = r.position();
    assert_eq!(at, 9);
    match r.read::<(u8, String)>() {
        Err(DecodeError::FrameTrailing { at: 9, left: 2, ty }) => assert!(ty.contains("String")),
        e => panic!("{e:?}"),
    }
    assert_eq!(r.position(), at);
    assert!(matches!(
        r.read::<bool>(), // 7 is not a bool
        Err(DecodeError::Postcard {
            at: 9,
            error: postcard::Error::DeserializeBadBool,
            ..
        })
    ));
    assert_eq!(r.read_bytes().unwrap(), [7, 1, b'a', 0, 0]);
    // A frame of 6 bytes with 1 left.
    assert!(matches!(
        r.read_bytes(),
        Err(DecodeError::Short { at: 18, want: 5 })
    ));
    assert!(matches!(
        r.read::<u8>(),
        Err(DecodeError::Short { at: 18, want: 5 })
    ));
    assert_eq!(r.position(), 18);
    assert_eq!(r.read_raw(5).unwrap(), [6, 0, 0, 0, 1]);
    assert!(matches!(
        r.read_u32(),
        Err(DecodeError::Short { at: 23, want: 4 })
    ));
    assert!(matches!(r.clone().finish(), Ok(())));
    let r = OutputReader::new(&bytes[..3]);
    assert!(matches!(r.finish(), Err(DecodeError::Trailing(3))));
    // Invalid UTF-8, as the guest's decoder.
    let mut r = OutputReader::new(&[2, 0, 0, 0, 1, 0xff]);
    let e = r.read::<String>().unwrap_err();
    assert!(matches!(
        e,
        DecodeError::Postcard {
            at: 0,
            error: postcard::Error::DeserializeBadUtf8,
            ..
        }
    ));
    assert!(
        e.to_string()
            .contains("does not decode as alloc::string::String"),
        "{e}"
    );
}

#[test]
fn unencodable_values_are_errors() {
    /// A sequence of unknown length, which postcard cannot encode.
    struct Unsized;
    impl Serialize for Unsized {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeSeq;
            s.serialize_seq(None)?.end()
        }
    }
    assert!(matches!(
        Input::new().write(&Unsized),
        Err(EncodeError::Postcard(_))
    ));
    assert!(guest_typed::encode_frame(&Unsized).is_err());
}

/// The types of guests/rust/typedio (the same serde data model, declared independently).
#[derive(Serialize)]
struct Request {
    name: String,
    values: Vec<i64>,
    scale: i32,
    tag: Option<[u8; 4]>,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Summary {
    greeting: String,
    count: u32,
    scaled_sum: i64,
    min: Option<i64>,
    max: Option<i64>,
    tag: Option<[u8; 4]>,
}

fn no_zk() -> ProveOptions {
    ProveOptions {
        zk: false,
        ..ProveOptions::default()
    }
}

#[test]
fn rust_guest_reads_and_commits_typed_values_proved_and_verified() {
    let program = bundled("typedio");
    let values: Vec<i64> = vec![i64::MIN, -1, 0, 1, 1 << 40, i64::MAX];
    let request = Request {
        name: "zkrv ✓".into(),
        values: values.clone(),
        scale: -3,
        tag: None,
    };
    let input = Input::new()
        .write(&request)
        .unwrap()
        .write_u64(0xdead_beef)
        .into_bytes();
    let proved = prove(&program, &input, &no_zk()).expect("proves");
    let receipt = Receipt::from_bytes(&proved.receipt.to_bytes().unwrap()).unwrap();
    receipt.verify(&program).expect("verifies");
    assert_eq!(receipt.exit_code(), 0);
    let mut out = receipt.output_reader();
    let summary: Summary = out.read().unwrap();
    assert_eq!(
        summary,
        Summary {
            greeting: "hello, zkrv ✓".into(),
            count: 6,
            scaled_sum: values
                .iter()
                .fold(0i64, |s, v| s.wrapping_add(v.wrapping_mul(-3))),
            min: Some(i64::MIN),
            max: Some(i64::MAX),
            tag: None,
        }
    );
    assert_eq!(out.read_u64().unwrap(), 0xdead_beef);
    out.finish().unwrap();
    // The output is a frame followed by 8 bytes, so it is not one value.
    assert!(matches!(
        receipt.output_value::<Summary>(),
        Err(DecodeError::Trailing(8))
    ));
    println!("typedio: {} cycles", proved.cycles);
}

#[test]
fn malformed_typed_input_exits_103_with_the_reason_on_fd_2() {
    let program = bundled("typedio");
    let good = Input::new()
        .write(&Request {
            name: "a".into(),
            values: vec![1],
            scale: 1,
            tag: Some(*b"abcd"),
        })
        .unwrap()
        .into_bytes();
    assert_eq!(program.execute(&good, 1 << 24).unwrap().exit_code, 0);
    let mut bad_utf8 = good.clone();
    bad_utf8[5] = 0xff; // the name's only byte
    let mut long_frame = good.clone();
    long_frame[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let trailing = Input::new()
        .write_bytes(&[&good[4..], &[0u8][..]].concat())
        .unwrap()
        .into_bytes();
    let cases: [(&str, &[u8], &str); 5] = [
        ("empty", &[], "ends before the value's frame"),
        (
            "short body",
            &good[..good.len() - 1],
            "ends inside the value's frame",
        ),
        ("bad utf-8", &bad_utf8, "does not decode as the type"),
        (
            "length 2^32-1",
            &long_frame,
            "ends inside the value's frame",
        ),
        ("trailing", &trailing, "leaves 1 bytes of its frame unread"),
    ];
    for (what, input, reason) in cases {
        let run = program.execute(input, 1 << 24).unwrap();
        let fd2 = String::from_utf8_lossy(&run.debug_output);
        assert_eq!(run.exit_code, READ_ERROR_EXIT_CODE, "{what}: {fd2}");
        assert!(
            fd2.starts_with("zkrv-guest: read::<typedio::Request>: ") && fd2.contains(reason),
            "{what}: {fd2}"
        );
        assert!(run.public_output.is_empty(), "{what}");
    }
    // The exit code is part of the proven statement.
    let proved = prove(&program, &bad_utf8, &no_zk()).expect("proves");
    proved.receipt.verify_any_exit(&program).expect("verifies");
    assert!(matches!(
        proved.receipt.verify(&program),
        Err(zkrv_sdk::Error::ExitCode { code }) if code == READ_ERROR_EXIT_CODE
    ));
    assert_eq!(proved.receipt.exit_code(), READ_ERROR_EXIT_CODE);
}

/// Builds crates/sdk/tests/guests/fixedio.c with the C runtime (the flags of guests/build.sh); `None` when
/// the cross compiler is not installed.
fn build_c_guest() -> Option<Vec<u8>> {
    let cc = std::env::var("CC_RISCV").unwrap_or_else(|_| "riscv64-unknown-elf-gcc".into());
    let have = std::process::Command::new(&cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        eprintln!(
            "SKIPPED the C fixed-width guest: {cc} not installed (scripts/test.sh and \
             scripts/install-guest-toolchains.sh install it)"
        );
        return None;
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = std::env::temp_dir().join(format!("zkrv-fixedio-{}.elf", std::process::id()));
    let built = std::process::Command::new(&cc)
        .args([
            "-march=rv64im",
            "-mabi=lp64",
            "-mcmodel=medany",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-std=c11",
            "-ffunction-sections",
            "-fdata-sections",
            "-fno-asynchronous-unwind-tables",
            "-fno-stack-protector",
            "--specs=picolibc.specs",
            "-nostartfiles",
            "-static",
            "-Wl,--gc-sections",
            "-Wl,--build-id=none",
        ])
        .arg(format!("-I{root}/guests/c/runtime"))
        .arg(format!("-T{root}/guests/link.ld"))
        .arg("-o")
        .arg(&out)
        .arg(format!("{root}/guests/c/runtime/crt0.S"))
        .arg(format!("{root}/guests/c/runtime/syscalls.c"))
        .arg(format!("{root}/crates/sdk/tests/guests/fixedio.c"))
        .output()
        .expect("the compiler runs");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let elf = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    Some(elf)
}

#[test]
fn c_guest_fixed_width_helpers_match_the_sdk() {
    let Some(elf) = build_c_guest() else { return };
    let program = Program::from_elf(&elf).expect("the C guest loads");
    let input = Input::new()
        .write_u32(0xffff_fff0)
        .write_u64(u64::MAX - 0x100)
        .write_i64(-1234567890123)
        .write_bytes(b"typed io")
        .unwrap()
        .into_bytes();
    let proved = prove(&program, &input, &no_zk()).expect("proves");
    proved.receipt.verify(&program).expect("verifies");
    assert_eq!(proved.receipt.exit_code(), 0);
    let mut out = proved.receipt.output_reader();
    assert_eq!(
        out.read_u64().unwrap(),
        (u64::MAX - 0x100).wrapping_add(0xffff_fff0)
    );
    assert_eq!(out.read_i64().unwrap(), 1234567890123);
    assert_eq!(out.read_bytes().unwrap(), b"oi depyt");
    assert_eq!(out.read_u32().unwrap(), 8);
    out.finish().unwrap();
    // A byte string over the guest's 64-byte buffer, and a missing one: exit 1.
    for input in [
        Input::new()
            .write_u32(1)
            .write_u64(2)
            .write_i64(3)
            .write_bytes(&[0; 65])
            .unwrap(),
        Input::new().write_u32(1).write_u64(2).write_i64(3),
    ] {
        assert_eq!(
            program
                .execute(input.as_bytes(), 1 << 20)
                .unwrap()
                .exit_code,
            1
        );
    }
}
