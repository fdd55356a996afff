//! What normalisation and decoding saw, as a small bit set. Some flags are evidence on their own
//! (invisible characters are rare in honest messages), others only explain a match.

use std::ops::{BitOr, BitOrAssign};

/// A set of normalisation flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u16);

impl Flags {
    pub const ZERO_WIDTH: Flags = Flags(1);
    pub const BIDI: Flags = Flags(1 << 1);
    pub const TAG_CHARS: Flags = Flags(1 << 2);
    pub const CONTROL: Flags = Flags(1 << 3);
    pub const COMPATIBILITY: Flags = Flags(1 << 4);
    pub const CONFUSABLE: Flags = Flags(1 << 5);
    pub const SPACED: Flags = Flags(1 << 6);
    pub const LEETSPEAK: Flags = Flags(1 << 7);
    pub const BASE64: Flags = Flags(1 << 8);
    pub const HEX: Flags = Flags(1 << 9);
    pub const URL_ENCODED: Flags = Flags(1 << 10);
    pub const ROT13: Flags = Flags(1 << 11);
    pub const TRUNCATED: Flags = Flags(1 << 12);
    /// A run of token soup, the shape of an optimised adversarial suffix ([`crate::soup`]).
    pub const TOKEN_SOUP: Flags = Flags(1 << 13);

    /// Every flag with its wire name, in wire order.
    pub const ALL: [(Flags, &'static str); 14] = [
        (Flags::ZERO_WIDTH, "zero_width"),
        (Flags::BIDI, "bidi_control"),
        (Flags::TAG_CHARS, "tag_characters"),
        (Flags::CONTROL, "control_characters"),
        (Flags::COMPATIBILITY, "compatibility_forms"),
        (Flags::CONFUSABLE, "confusables"),
        (Flags::SPACED, "spaced_letters"),
        (Flags::LEETSPEAK, "leetspeak"),
        (Flags::BASE64, "base64"),
        (Flags::HEX, "hex"),
        (Flags::URL_ENCODED, "url_encoded"),
        (Flags::ROT13, "rot13"),
        (Flags::TRUNCATED, "truncated"),
        (Flags::TOKEN_SOUP, "token_soup"),
    ];

    pub const fn empty() -> Flags {
        Flags(0)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn intersects(self, other: Flags) -> bool {
        self.0 & other.0 != 0
    }

    /// The wire names of the flags set.
    pub fn names(self) -> Vec<&'static str> {
        Flags::ALL
            .iter()
            .filter(|(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    }

    /// How much each flag set says on its own that a message is an attack (noisy-OR weight),
    /// with the category it is reported under. Spelling tricks (leet, spacing, confusables) are
    /// not evidence alone: they only let the rules see through them.
    pub fn evidence(self) -> impl Iterator<Item = (f32, &'static str)> {
        [
            (Flags::TAG_CHARS, 0.9, "hidden_text"),
            (Flags::BIDI, 0.6, "invisible_characters"),
            (Flags::ZERO_WIDTH, 0.35, "invisible_characters"),
            (Flags::TRUNCATED, 0.5, "input_too_large"),
            (Flags::TOKEN_SOUP, 0.55, "adversarial_suffix"),
        ]
        .into_iter()
        .filter(move |(f, _, _)| self.contains(*f))
        .map(|(_, w, c)| (w, c))
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}
