fn main() {
    let p = std::env::args().nth(1).unwrap();
    let t = std::fs::read_to_string(p).unwrap();
    print!("{}", hlo::print_module(&hlo::parse_module(&t).unwrap()));
}
