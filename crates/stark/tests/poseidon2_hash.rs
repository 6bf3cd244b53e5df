//! The Poseidon2 hash of the Poseidon2 preset (docs/stark.md §11): the permutation against the executor's
//! reference (Plonky3's), the Merkle tree and the transcript against the specification recomputed here
//! from that reference, openings and their tampering, and a proof that verifies and rejects every
//! tampering with a specific error.

mod proto_common;

use proto_common::*;
use zkrv_executor::precompile::poseidon2 as reference;
use zkrv_stark::field::{Ext3, PrimeCharacteristicRing, PrimeField64, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::{
    compress_openings, verify_batch, verify_tree_openings, MatrixDims, MerkleError, MerkleHash,
    MerkleTree,
};
use zkrv_stark::pcs::PcsError;
use zkrv_stark::poseidon2;
use zkrv_stark::proof::ProofFormatError;
use zkrv_stark::transcript::Transcript;
use zkrv_stark::{preprocess, prove, verify, Proof, StarkConfig, VerifyError};

const P: u64 = 0xffff_ffff_0000_0001;
const P2: MerkleHash = MerkleHash::Poseidon2;

/// SplitMix64: a reproducible stream for the printed seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn elem(&mut self) -> F {
        F::from_u64(self.next() % P)
    }
}

fn perm_ref(s: [F; 8]) -> [F; 8] {
    let mut u = s.map(|x| x.as_canonical_u64());
    reference(&mut u);
    u.map(F::from_u64)
}

/// The leaf sponge of docs/stark.md §11.1, written from the specification over the reference permutation.
fn leaf_spec(elems: &[F]) -> [F; 4] {
    let mut s = [F::ZERO; 8];
    s[4] = F::from_u64(elems.len() as u64);
    for chunk in elems.chunks(4) {
        for (i, x) in s[..4].iter_mut().enumerate() {
            *x = chunk.get(i).copied().unwrap_or(F::ZERO);
        }
        s = perm_ref(s);
    }
    [s[0], s[1], s[2], s[3]]
}

/// The node hash of docs/stark.md §11.1: `P(l || r)[0..4] + l`.
fn node_spec(l: [F; 4], r: [F; 4]) -> [F; 4] {
    let s = perm_ref([l[0], l[1], l[2], l[3], r[0], r[1], r[2], r[3]]);
    std::array::from_fn(|i| s[i] + l[i])
}

fn bytes(d: [F; 4]) -> [u8; 32] {
    let mut b = [0u8; 32];
    for (o, x) in b.chunks_exact_mut(8).zip(d) {
        o.copy_from_slice(&x.as_canonical_u64().to_le_bytes());
    }
    b
}

fn random_matrix(r: &mut Rng, height: usize, width: usize) -> RowMajorMatrix {
    RowMajorMatrix::new((0..height * width).map(|_| r.elem()).collect(), width)
}

#[test]
fn permutation_matches_the_executor_reference() {
    let seed = 0x5eed_0026;
    println!("seed = {seed:#x}");
    let mut r = Rng(seed);
    let mut inputs: Vec<[F; 8]> = vec![[F::ZERO; 8], [F::from_u64(P - 1); 8]];
    inputs.push(std::array::from_fn(|i| F::from_u64(i as u64)));
    for _ in 0..64 {
        inputs.push(std::array::from_fn(|_| r.elem()));
    }
    for input in inputs {
        let mut s = input;
        poseidon2::permute(&mut s);
        assert_eq!(s, perm_ref(input), "input {input:?}");
        assert_ne!(s, input);
    }
}

#[test]
fn merkle_root_matches_the_specification() {
    let seed = 0x5eed_0027;
    println!("seed = {seed:#x}");
    let mut r = Rng(seed);
    // Heights 8 (two matrices: 5 + 3 = 8 elements, two full chunks) and 4 (6 elements: one full chunk and
    // a padded one), injected at level 2.
    let a = random_matrix(&mut r, 8, 5);
    let b = random_matrix(&mut r, 8, 3);
    let c = random_matrix(&mut r, 4, 6);
    let tree = MerkleTree::with_salts(P2, vec![a.clone(), c.clone(), b.clone()], Vec::new());
    let mut level: Vec<[F; 4]> = (0..8)
        .map(|i| leaf_spec(&[a.row(i), b.row(i)].concat()))
        .collect();
    assert_eq!(
        tree.layers()[0],
        level.iter().map(|&d| bytes(d)).collect::<Vec<_>>()
    );
    for lh in (0..3).rev() {
        level = (0..1 << lh)
            .map(|j| node_spec(level[2 * j], level[2 * j + 1]))
            .collect();
        if lh == 2 {
            level = (0..4)
                .map(|j| node_spec(level[j], leaf_spec(c.row(j))))
                .collect();
        }
    }
    assert_eq!(tree.root(), bytes(level[0]));
    // Not the Keccak tree.
    let keccak = MerkleTree::with_salts(MerkleHash::Keccak256, vec![a, c, b], Vec::new());
    assert_ne!(keccak.root(), tree.root());
}

#[test]
fn merkle_openings_verify_and_tampering_is_rejected() {
    let seed = 0x5eed_0028;
    println!("seed = {seed:#x}");
    let mut r = Rng(seed);
    let mats = vec![random_matrix(&mut r, 16, 7), random_matrix(&mut r, 4, 2)];
    let dims: Vec<MatrixDims> = mats
        .iter()
        .map(|m| MatrixDims {
            width: m.width,
            log_height: m.log_height().unwrap(),
        })
        .collect();
    let salts = vec![random_matrix(&mut r, 16, 4), random_matrix(&mut r, 4, 4)];
    let tree = MerkleTree::with_salts(P2, mats.clone(), salts.clone());
    // The digest-only tree hashed one block at a time is the same tree.
    let blocks = MerkleTree::from_coset_blocks(P2, dims.clone(), salts, 2, |c| {
        mats.iter()
            .map(|m| {
                let h = m.height() / 4;
                RowMajorMatrix::new(
                    m.values[c * h * m.width..(c + 1) * h * m.width].to_vec(),
                    m.width,
                )
            })
            .collect()
    });
    assert_eq!(blocks.root(), tree.root());
    assert_eq!(blocks.layers(), tree.layers());
    let root = tree.root();
    for idx in 0..16 {
        let (rows, proof) = tree.open(idx);
        verify_batch(P2, &root, &dims, idx, &rows, &proof, 4).unwrap();
        // A leaf element.
        let mut bad = rows.clone();
        bad[0][3] += F::ONE;
        assert_eq!(
            verify_batch(P2, &root, &dims, idx, &bad, &proof, 4),
            Err(MerkleError::RootMismatch)
        );
        // A row of the injected matrix.
        let mut bad = rows.clone();
        bad[1][1] += F::ONE;
        assert_eq!(
            verify_batch(P2, &root, &dims, idx, &bad, &proof, 4),
            Err(MerkleError::RootMismatch)
        );
        // A path step.
        for k in 0..4 {
            let mut badp = proof.clone();
            badp.siblings[k][8] ^= 1;
            assert_eq!(
                verify_batch(P2, &root, &dims, idx, &rows, &badp, 4),
                Err(MerkleError::RootMismatch),
                "index {idx} sibling {k}"
            );
        }
        // A non-canonical limb (the same value mod p would otherwise be a second encoding).
        let mut badp = proof.clone();
        badp.siblings[2][24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            verify_batch(P2, &root, &dims, idx, &rows, &badp, 4),
            Err(MerkleError::NonCanonicalDigest(2))
        );
        // A salt.
        let mut badp = proof.clone();
        badp.salts[0][0] += F::ONE;
        assert_eq!(
            verify_batch(P2, &root, &dims, idx, &rows, &badp, 4),
            Err(MerkleError::RootMismatch)
        );
        // The other hash.
        assert_eq!(
            verify_batch(MerkleHash::Keccak256, &root, &dims, idx, &rows, &proof, 4),
            Err(MerkleError::RootMismatch)
        );
    }
    // The multiproof of several queries.
    let indices = [1usize, 2, 3, 9, 14];
    let openings: Vec<_> = indices.iter().map(|&i| tree.open(i)).collect();
    let o = compress_openings(&dims, &indices, &openings).unwrap();
    verify_tree_openings(P2, &root, &dims, &indices, &o, 4).unwrap();
    let mut bad = o.clone();
    bad.siblings[0][0] ^= 1;
    assert_eq!(
        verify_tree_openings(P2, &root, &dims, &indices, &bad, 4),
        Err(MerkleError::RootMismatch)
    );
    let mut bad = o.clone();
    bad.siblings[1][31] = 0xff;
    bad.siblings[1][24..32].copy_from_slice(&(P + 5).to_le_bytes());
    assert_eq!(
        verify_tree_openings(P2, &root, &dims, &indices, &bad, 4),
        Err(MerkleError::NonCanonicalDigest(1))
    );
    let mut bad = o;
    bad.rows[0][2][0] += F::ONE;
    assert_eq!(
        verify_tree_openings(P2, &root, &dims, &indices, &bad, 4),
        Err(MerkleError::RootMismatch)
    );
}

#[test]
fn transcript_matches_the_specification() {
    let mut t = Transcript::with_hash(P2, b"L");
    assert_eq!(t.hash(), P2);
    t.observe_field(&[F::from_u64(77)]);
    let got: Vec<F> = (0..6).map(|_| t.sample_field()).collect();

    // bytes("zkrv-transcript-v1") (18 bytes: chunks of 7, 7, 4), u64(1) (halves 1, 0), bytes("L").
    let label = b"zkrv-transcript-v1";
    let chunk = |b: &[u8]| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        F::from_u64(u64::from_le_bytes(w))
    };
    let e = [
        chunk(&label[0..7]),
        chunk(&label[7..14]),
        chunk(&label[14..18]),
        F::ONE,
        F::ZERO,
        chunk(b"L"),
        F::from_u64(77),
    ];
    let mut s = [F::ZERO; 8];
    // A full block of 4: s[7] += 4.
    s[..4].copy_from_slice(&e[..4]);
    s[7] += F::from_u64(4);
    s = perm_ref(s);
    // The sample duplexes the 3 pending inputs, padded: s[3] = 0, s[7] += 3.
    s[..3].copy_from_slice(&e[4..7]);
    s[3] = F::ZERO;
    s[7] += F::from_u64(3);
    s = perm_ref(s);
    let mut want: Vec<F> = s[..4].to_vec();
    // Squeezing past the rate: a duplex of no inputs (rate zeroed, s[7] += 0).
    s[..4].fill(F::ZERO);
    s = perm_ref(s);
    want.extend_from_slice(&s[..2]);
    assert_eq!(got, want);

    // The Keccak transcript of the same calls is another one; the label is bound.
    let mut k = Transcript::new(b"L");
    k.observe_field(&[F::from_u64(77)]);
    assert_ne!(k.sample_field(), want[0]);
    let mut l = Transcript::with_hash(P2, b"M");
    l.observe_field(&[F::from_u64(77)]);
    assert_ne!(l.sample_field(), want[0]);
    // Extension samples are three field samples.
    let mut a = Transcript::with_hash(P2, b"L");
    let mut b = a.clone();
    let x = a.sample_ext();
    assert_eq!(
        x,
        Ext3([b.sample_field(), b.sample_field(), b.sample_field()])
    );
    // Indices are the low bits of a field sample.
    let mut a = Transcript::with_hash(P2, b"L");
    let mut b = a.clone();
    assert_eq!(
        a.sample_bits(20) as u64,
        b.sample_field().as_canonical_u64() & 0xf_ffff
    );
}

#[test]
fn transcript_observations_are_injective() {
    let sample = |f: &dyn Fn(&mut Transcript)| {
        let mut t = Transcript::with_hash(P2, b"inj");
        f(&mut t);
        t.sample_field()
    };
    // Padded partial block vs a full block ending in zero.
    let a = sample(&|t| t.observe_field(&[F::ONE]));
    let b = sample(&|t| t.observe_field(&[F::ONE, F::ZERO, F::ZERO, F::ZERO]));
    assert_ne!(a, b);
    // u64 halves: 2^32 vs (0, 1).
    let a = sample(&|t| t.observe_u64(1 << 32));
    let b = sample(&|t| t.observe_u64(1));
    assert_ne!(a, b);
    // A byte in the chunk's last position.
    let a = sample(&|t| t.observe_bytes(&[1, 0, 0, 0, 0, 0, 0]));
    let b = sample(&|t| t.observe_bytes(&[1, 0, 0, 0, 0, 0, 1]));
    assert_ne!(a, b);
}

#[test]
fn grinding_finds_the_smallest_nonce_and_the_check_agrees() {
    for bits in [0u32, 4, 10] {
        let mut t = Transcript::with_hash(P2, b"grind");
        t.observe_field(&[F::from_u64(bits as u64)]);
        let start = t.clone();
        let nonce = t.grind(bits);
        println!("bits {bits}: nonce {nonce}");
        assert!(start.clone().check_grind(bits, nonce));
        for n in 0..nonce {
            assert!(!start.clone().check_grind(bits, n), "bits {bits} nonce {n}");
        }
        // Both observe the nonce: the transcripts stay in step.
        let mut v = start.clone();
        v.check_grind(bits, nonce);
        assert_eq!(v.sample_field(), t.sample_field());
    }
    assert!(!Transcript::with_hash(P2, b"z").check_grind(65, 0));
}

const STMT: &[u8] = b"program=fib;exit=0";

fn p2_configs() -> Vec<StarkConfig> {
    let seed = 20261203;
    println!("zk seed = {seed}");
    vec![
        StarkConfig::dev().with_hash(P2),
        StarkConfig {
            zk_seed: Some(seed),
            ..StarkConfig::dev_zk().with_hash(P2)
        },
    ]
}

#[test]
fn poseidon2_proof_verifies_and_tampering_is_rejected() {
    let fx = fixture(7);
    let pre = preprocess(&airs(), fx.preprocessed.clone()).unwrap();
    for config in p2_configs() {
        let check = |c: &StarkConfig, p: &Proof| verify(c, 0, &airs(), &pre, &fx.public, STMT, p);
        let proof = prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, STMT).unwrap();
        assert_eq!(proof.hash, P2);
        check(&config, &proof).unwrap();
        let bytes = proof.to_bytes();
        assert_eq!(bytes[6], config.zk as u8 | 2, "mode byte");
        assert_eq!(Proof::from_bytes(&bytes).unwrap(), proof);
        // Deterministic (the zk proof has a test seed).
        let again = prove(&config, &airs(), &pre, fx.traces.clone(), &fx.public, STMT).unwrap();
        assert_eq!(again.to_bytes(), bytes);

        // The same proof under Keccak is another one; neither verifier takes the other's proof.
        let keccak_cfg = config.clone().with_hash(MerkleHash::Keccak256);
        let keccak = prove(
            &keccak_cfg,
            &airs(),
            &pre,
            fx.traces.clone(),
            &fx.public,
            STMT,
        )
        .unwrap();
        assert_ne!(keccak.main_root, proof.main_root);
        assert_eq!(
            check(&keccak_cfg, &proof),
            Err(VerifyError::HashMismatch {
                proof: P2,
                expected: MerkleHash::Keccak256
            })
        );
        assert_eq!(
            check(&config, &keccak),
            Err(VerifyError::HashMismatch {
                proof: MerkleHash::Keccak256,
                expected: P2
            })
        );
        // The mode byte: relabelled as Keccak it is refused by hash; an unknown bit is a format error.
        let mut b = bytes.clone();
        b[6] &= 1;
        let relabelled = Proof::from_bytes(&b).unwrap();
        assert_eq!(
            check(&config, &relabelled),
            Err(VerifyError::HashMismatch {
                proof: MerkleHash::Keccak256,
                expected: P2
            })
        );
        let mut b = bytes.clone();
        b[6] |= 4;
        assert_eq!(
            Proof::from_bytes(&b),
            Err(ProofFormatError::Mode { value: b[6] })
        );
        // A non-canonical digest limb (the main root, right after the statement digest and heights).
        let off = 7 + 32 + 4 + proof.log_heights.len();
        let mut b = bytes.clone();
        b[off..off + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            Proof::from_bytes(&b),
            Err(ProofFormatError::NonCanonicalDigest(off))
        );
        // The main root (canonical): every challenge changes, and the openings no longer match.
        let mut p = proof.clone();
        p.main_root[0] ^= 1;
        assert!(check(&config, &p).is_err());
        // A Merkle path step of the main round.
        let mut p = proof.clone();
        p.pcs.round_openings[0].siblings[0][0] ^= 1;
        assert!(
            matches!(
                check(&config, &p),
                Err(VerifyError::Pcs(PcsError::Merkle {
                    round: 0,
                    source: MerkleError::RootMismatch
                }))
            ),
            "{:?}",
            check(&config, &p)
        );
        // An opened leaf of the main round.
        let mut p = proof.clone();
        p.pcs.round_openings[0].rows[0][0][0] += F::ONE;
        assert!(check(&config, &p).is_err());
        // A FRI layer's path.
        let mut p = proof.clone();
        p.pcs.fri_openings[0].siblings[0][0] ^= 1;
        assert!(
            matches!(
                check(&config, &p),
                Err(VerifyError::Pcs(PcsError::FriMerkle { layer: 0, .. }))
            ),
            "{:?}",
            check(&config, &p)
        );
        // Transcript-derived values: the proof-of-work nonce (checked against the Poseidon2 grinding
        // hash) and an out-of-domain value (the challenges after it change).
        let mut p = proof.clone();
        p.pcs.pow_nonce ^= 1 << 40;
        assert_eq!(check(&config, &p), Err(VerifyError::Grinding));
        let mut p = proof.clone();
        p.opened[0][0][0][0] += Ext3::ONE;
        assert!(check(&config, &p).is_err());
    }
}
