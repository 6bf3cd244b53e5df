fn main() {
    eprintln!("zkrv: not yet implemented");
    std::process::exit(2);
}
