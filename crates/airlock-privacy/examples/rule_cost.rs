//! Time per rule on a text file (each rule's regex alone over the whole text): for finding the
//! rule that makes the scanner slow. `cargo run --release -p airlock-privacy --example rule_cost -- FILE`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: rule_cost FILE")?;
    let text = std::fs::read_to_string(path)?;
    for r in airlock_privacy::load()? {
        let re = regex_automata::meta::Regex::builder()
            .syntax(
                regex_automata::util::syntax::Config::new()
                    .unicode(false)
                    .utf8(false),
            )
            .build(&r.pattern)?;
        let t = std::time::Instant::now();
        let n = re.find_iter(&text).count();
        println!(
            "{:>10.2} ms {:>6} {}",
            t.elapsed().as_secs_f64() * 1e3,
            n,
            r.id
        );
    }
    let s = airlock_privacy::Scanner::builtin(&airlock_privacy::Selection::default())?;
    let t = std::time::Instant::now();
    let n = s.scan(&text).len();
    println!(
        "{:>10.2} ms {:>6} whole scanner",
        t.elapsed().as_secs_f64() * 1e3,
        n
    );
    Ok(())
}
