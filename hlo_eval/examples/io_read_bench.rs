//! Times reading an io file both ways, side by side in one run: the streaming reader
//! (`IoCase::read`) and the document tree it replaced (serde_json::Value, then each array).
//! `cargo run --release -p hlo_eval --example io_read_bench -- FILE.io.json [ROUNDS]`
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: io_read_bench FILE.io.json [ROUNDS]");
    let rounds: usize = args.next().map_or(3, |r| r.parse().expect("ROUNDS"));
    let text = std::fs::read_to_string(&path).expect("readable io file");
    let mut best = [f64::MAX; 2];
    for _ in 0..rounds {
        let t = Instant::now();
        let case = hlo_eval::IoCase::parse(&text).expect("streams");
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        let tree: Vec<_> = ["inputs", "outputs"]
            .iter()
            .filter_map(|k| v[*k].as_array())
            .flatten()
            .map(|a| hlo_eval::parse_array(a, "x").expect("array"))
            .collect();
        best[1] = best[1].min(t.elapsed().as_secs_f64());
        assert_eq!(tree.len(), case.inputs.len() + case.outputs.len());
    }
    let mb = text.len() as f64 / 1e6;
    println!(
        "{mb:.1} MB: streaming {:.0} ms ({:.0} MB/s), tree {:.0} ms ({:.0} MB/s), ratio {:.2}x",
        best[0] * 1e3,
        mb / best[0],
        best[1] * 1e3,
        mb / best[1],
        best[1] / best[0]
    );
}
