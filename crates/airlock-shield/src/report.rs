//! Evaluation arithmetic: Wilson intervals, recall at a fixed false-positive rate, ROC curves
//! and a small hand-written SVG plot of them (no plotting dependency).

use std::fmt::Write as _;

/// A proportion `k / n` with its Wilson 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub k: usize,
    pub n: usize,
}

impl Rate {
    pub fn value(self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.k as f64 / self.n as f64
        }
    }

    /// Wilson score interval at 95%.
    pub fn wilson(self) -> (f64, f64) {
        if self.n == 0 {
            return (0.0, 1.0);
        }
        let z = 1.959_964f64;
        let n = self.n as f64;
        let p = self.value();
        let denom = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / denom;
        let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
        ((centre - half).max(0.0), (centre + half).min(1.0))
    }
}

/// The lowest score threshold whose false-positive rate over `negatives` is at most `fpr`
/// (an item is flagged when its score is strictly above the threshold).
pub fn threshold_at_fpr(negatives: &[f32], fpr: f64) -> f32 {
    let mut s: Vec<f32> = negatives.to_vec();
    s.sort_by(|a, b| b.total_cmp(a));
    let allowed = (fpr * s.len() as f64).floor() as usize;
    // Scores tied at the cut would all be flagged together: step over the tie.
    s.get(allowed).copied().unwrap_or(0.0)
}

/// Fraction of `positives` strictly above `threshold`.
pub fn recall_above(positives: &[f32], threshold: f32) -> Rate {
    Rate {
        k: positives.iter().filter(|&&p| p > threshold).count(),
        n: positives.len(),
    }
}

/// ROC points (false-positive rate, true-positive rate), from (0,0) to (1,1).
pub fn roc(positives: &[f32], negatives: &[f32]) -> Vec<(f64, f64)> {
    let mut all: Vec<(f32, bool)> = positives
        .iter()
        .map(|&s| (s, true))
        .chain(negatives.iter().map(|&s| (s, false)))
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (np, nn) = (positives.len().max(1) as f64, negatives.len().max(1) as f64);
    let (mut tp, mut fp) = (0usize, 0usize);
    let mut out = vec![(0.0, 0.0)];
    let mut i = 0;
    while i < all.len() {
        let s = all[i].0;
        while i < all.len() && all[i].0 == s {
            if all[i].1 {
                tp += 1;
            } else {
                fp += 1;
            }
            i += 1;
        }
        out.push((fp as f64 / nn, tp as f64 / np));
    }
    out.push((1.0, 1.0));
    out
}

/// Area under a ROC curve (trapezoids).
pub fn auc(points: &[(f64, f64)]) -> f64 {
    points
        .windows(2)
        .map(|w| (w[1].0 - w[0].0) * (w[1].1 + w[0].1) / 2.0)
        .sum()
}

/// An SVG with one ROC curve per `(label, points)`, false-positive rate on a log axis from
/// 0.1% to 100% (the low-FPR end is where a filter lives).
pub fn roc_svg(title: &str, curves: &[(String, Vec<(f64, f64)>)]) -> String {
    let (w, h, m) = (640.0, 480.0, 60.0);
    let (pw, ph) = (w - 2.0 * m, h - 2.0 * m);
    let x_of = |fpr: f64| {
        let l = fpr.max(1e-3).log10(); // -3 ..= 0
        m + (l + 3.0) / 3.0 * pw
    };
    let y_of = |tpr: f64| m + (1.0 - tpr) * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/><text x="{}" y="30" text-anchor="middle" font-size="15">{}</text>"##,
        w / 2.0,
        escape(title)
    );
    let _ = write!(
        s,
        r##"<rect x="{m}" y="{m}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##
    );
    for (f, label) in [(1e-3, "0.1%"), (1e-2, "1%"), (1e-1, "10%"), (1.0, "100%")] {
        let x = x_of(f);
        let _ = write!(
            s,
            r##"<line x1="{x}" y1="{m}" x2="{x}" y2="{}" stroke="#ddd"/><text x="{x}" y="{}" text-anchor="middle">{label}</text>"##,
            m + ph,
            m + ph + 18.0
        );
    }
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let y = y_of(t);
        let _ = write!(
            s,
            r##"<line x1="{m}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{t:.2}</text>"##,
            m + pw,
            m - 6.0,
            y + 4.0
        );
    }
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" text-anchor="middle">false-positive rate (log)</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">recall</text>"##,
        m + pw / 2.0,
        h - 12.0,
        m + ph / 2.0,
        m + ph / 2.0
    );
    let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
    for (i, (label, pts)) in curves.iter().enumerate() {
        let c = colours[i % colours.len()];
        let path: Vec<String> = pts
            .iter()
            .map(|&(f, t)| format!("{:.1},{:.1}", x_of(f), y_of(t)))
            .collect();
        let _ = write!(
            s,
            r##"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/><text x="{}" y="{}" fill="{c}">{} (AUC {:.3})</text>"##,
            path.join(" "),
            m + 10.0,
            m + ph - 12.0 - 16.0 * i as f64,
            escape(label),
            auc(pts)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_brackets_the_rate() {
        let r = Rate { k: 95, n: 100 };
        let (lo, hi) = r.wilson();
        assert!(lo < 0.95 && hi > 0.95 && lo > 0.88 && hi < 0.99);
        assert_eq!(Rate { k: 0, n: 0 }.wilson(), (0.0, 1.0));
    }

    #[test]
    fn threshold_keeps_fpr() {
        let neg: Vec<f32> = (0..100).map(|i| i as f32 / 100.0).collect();
        let t = threshold_at_fpr(&neg, 0.01);
        assert_eq!(neg.iter().filter(|&&s| s > t).count(), 1);
        let r = recall_above(&[0.995, 0.5], t);
        assert_eq!((r.k, r.n), (1, 2));
    }

    #[test]
    fn roc_of_a_perfect_split() {
        let pts = roc(&[0.9, 0.8], &[0.1, 0.2]);
        assert!((auc(&pts) - 1.0).abs() < 1e-9);
        let svg = roc_svg("t", &[("user".into(), pts)]);
        assert!(svg.starts_with("<svg") && svg.contains("polyline"));
    }
}
