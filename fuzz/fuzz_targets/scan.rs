//! Fuzzes the text scanner: any bytes (as lossy UTF-8) in both directions must scan without a
//! panic, with spans on character boundaries inside the input and scores in [0, 1].

#![no_main]

use airlock_shield::{Direction, scan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for dir in [Direction::User, Direction::Tool] {
        let r = scan(&text, dir);
        assert!((0.0..=1.0).contains(&r.confidence) && (0.0..=1.0).contains(&r.score));
        for m in &r.matches {
            assert!(m.span.start <= m.span.end && m.span.end <= text.len());
            assert!(text.is_char_boundary(m.span.start) && text.is_char_boundary(m.span.end));
        }
    }
});
