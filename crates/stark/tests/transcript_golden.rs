//! Golden values pinning the byte-level conventions (transcript, Merkle, LDE, PCS). Any backend (e.g. CUDA)
//! must reproduce these; a change here is a proof-format change.

use zkrv_stark::field::{Ext3, PrimeField64, F};
use zkrv_stark::matrix::RowMajorMatrix;
use zkrv_stark::merkle::MerkleTree;
use zkrv_stark::pcs::{FriConfig, OpenedValues, PcsProof};
use zkrv_stark::poly::lde_batch;
use zkrv_stark::transcript::Transcript;

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn fixed_trace(h: usize, w: usize) -> RowMajorMatrix {
    RowMajorMatrix::from_fn(h, w, |r, c| {
        F::new((r * w + c) as u64 * 0x1234_5678_9abc_def1)
    })
}

/// [`zkrv_stark::pcs::open`] on the CPU backend over stored trees (cloned into rounds).
fn open(
    cfg: &FriConfig,
    rounds: &[(&MerkleTree, Vec<Vec<Ext3>>)],
    tr: &mut Transcript,
    hiding: Option<&zkrv_stark::zk::ZkRng>,
) -> (OpenedValues, PcsProof) {
    use zkrv_stark::backend::{CpuBackend, CpuCommitted};
    let cs: Vec<CpuCommitted> = rounds
        .iter()
        .map(|(t, _)| CpuCommitted::stored((*t).clone(), cfg.log_blowup))
        .collect();
    let r: Vec<(&CpuCommitted, Vec<Vec<Ext3>>)> = cs
        .iter()
        .zip(rounds)
        .map(|(c, (_, p))| (c, p.clone()))
        .collect();
    zkrv_stark::pcs::open(&CpuBackend::default(), cfg, &r, tr, hiding).expect("open")
}

#[test]
fn transcript_golden_values() {
    let mut t = Transcript::new(b"zkrv");
    t.observe_u64(1);
    let a = t.sample_field().as_canonical_u64();
    let e = t.sample_ext().to_canonical_u64s();
    let b = t.sample_bits(20);
    let nonce = t.grind(8);
    let after = t.sample_field().as_canonical_u64();
    println!("a={a} e={e:?} b={b} nonce={nonce} after={after}");
    assert_eq!((a, e, b, nonce, after), GOLDEN_TRANSCRIPT);
}

#[test]
fn transcript_golden_merkle_lde_pcs() {
    let t0 = fixed_trace(8, 3);
    let t1 = fixed_trace(2, 2);
    let lde0 = lde_batch(&t0, 1);
    let lde1 = lde_batch(&t1, 1);
    let l = lde0.row(5)[2].as_canonical_u64();
    let tree = MerkleTree::new(vec![lde0, lde1]);
    let root = hex(&tree.root());
    let cfg = FriConfig {
        log_blowup: 1,
        num_queries: 3,
        query_grinding_bits: 4,
        log_final_poly_len: 0,
        log_folding_arity: 1,
    };
    let z = Ext3::from_u64s([11, 12, 13]);
    let mut tr = Transcript::new(b"zkrv");
    tr.observe_digest(&tree.root());
    let (values, proof) = open(&cfg, &[(&tree, vec![vec![z], vec![z]])], &mut tr, None);
    let v = values[0][1][0][1].to_canonical_u64s();
    let fri0 = hex(&proof.fri_roots[0]);
    let fin = proof.final_poly[0].to_canonical_u64s();
    println!(
        "lde0[5][2]={l}\nroot={root}\nvalue={v:?}\nfri0={fri0}\nfinal={fin:?}\nnonce={}",
        proof.pow_nonce
    );
    assert_eq!(l, GOLDEN_LDE);
    assert_eq!(root, GOLDEN_ROOT);
    assert_eq!(v, GOLDEN_VALUE);
    assert_eq!(fri0, GOLDEN_FRI0);
    assert_eq!(fin, GOLDEN_FINAL);
    assert_eq!(proof.pow_nonce, GOLDEN_NONCE);
}

const GOLDEN_TRANSCRIPT: (u64, [u64; 3], usize, u64, u64) = (
    5029906725298065094,
    [
        13329552616764708622,
        10576472763186747343,
        5873233258334400213,
    ],
    543427,
    1152,
    17126782678618578698,
);
const GOLDEN_LDE: u64 = 227586585807378146;
const GOLDEN_ROOT: &str = "04b613f489289d18e975465c2efe0335b5ed8f749fa1bc20fc73181fd7230852";
const GOLDEN_VALUE: [u64; 3] = [
    6640827862240471432,
    2705522459849100469,
    1393753992385310148,
];
const GOLDEN_FRI0: &str = "aae62ebd306469c667a7c7f761992e308800bb30b0ff52b96f34d48e648181d8";
const GOLDEN_FINAL: [u64; 3] = [
    2564089416487297314,
    11729003478462730464,
    17631290277094095504,
];
const GOLDEN_NONCE: u64 = 12;
