fn main() {
    std::process::exit(cargo_verify_matrix::main());
}
