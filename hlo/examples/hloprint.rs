//! Parses an HLO text file and prints it back: `hloprint FILE [--jax]`.
//! `--jax` prints without `%` sigils and computation signatures (JAX's unoptimized style).

use hlo::printer::{print_module_with, PrintOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: hloprint FILE [--jax]")?;
    let jax = args.next().as_deref() == Some("--jax");
    let text = std::fs::read_to_string(&path)?;
    let module = hlo::parse_module(&text).map_err(|e| format!("{path}:{e}"))?;
    let opts = if jax {
        PrintOptions::jax()
    } else {
        PrintOptions::default()
    };
    print!("{}", print_module_with(&module, &opts));
    Ok(())
}
