//! Prints what the privacy scanner finds in its argument (or standard input) and the redacted
//! text: for working on rules.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let text = match std::env::args().nth(1) {
        Some(t) => t,
        None => std::io::read_to_string(std::io::stdin())?,
    };
    let s = airlock_privacy::Scanner::builtin(&airlock_privacy::Selection::default())?;
    let found = s.scan(&text);
    for f in &found {
        println!("{} {:?} {:?}", f.rule, f.span, &text[f.span.clone()]);
    }
    let mut v = airlock_privacy::Vault::new();
    println!("{}", v.redact(&text, &found));
    Ok(())
}
