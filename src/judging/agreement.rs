//! Cohen's kappa between two raters' grades of the same items (the LLM's proposals and
//! a person's grades): (p_o - p_e) / (1 - p_e), with p_e from each rater's marginals.

use crate::dataset::Grade;

/// Agreement over paired grades.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    pub pairs: usize,
    /// Share of pairs where both gave the same grade.
    pub observed: f64,
    /// Agreement expected by chance from the marginals.
    pub expected: f64,
    /// Cohen's kappa; `None` when chance agreement is 1 (both raters constant and equal)
    /// or there are no pairs.
    pub kappa: Option<f64>,
}

/// Cohen's kappa of `(first rater, second rater)` grades.
pub fn cohens_kappa(pairs: &[(Grade, Grade)]) -> Agreement {
    let n = pairs.len();
    if n == 0 {
        return Agreement {
            pairs: 0,
            observed: 0.0,
            expected: 0.0,
            kappa: None,
        };
    }
    let mut grades: Vec<Grade> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    grades.sort_unstable();
    grades.dedup();
    let observed = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n as f64;
    let expected: f64 = grades
        .iter()
        .map(|&grade| {
            let first = pairs.iter().filter(|(a, _)| *a == grade).count() as f64 / n as f64;
            let second = pairs.iter().filter(|(_, b)| *b == grade).count() as f64 / n as f64;
            first * second
        })
        .sum();
    let kappa = (expected < 1.0).then(|| (observed - expected) / (1.0 - expected));
    Agreement {
        pairs: n,
        observed,
        expected,
        kappa,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_of_the_textbook_example() {
        // Wikipedia's "Cohen's kappa" example: 50 items, both yes 20, A yes B no 5,
        // A no B yes 10, both no 15: p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5,
        // kappa = 0.4.
        let mut pairs = vec![(1, 1); 20];
        pairs.extend(vec![(1, 0); 5]);
        pairs.extend(vec![(0, 1); 10]);
        pairs.extend(vec![(0, 0); 15]);
        let agreement = cohens_kappa(&pairs);
        assert!((agreement.observed - 0.7).abs() < 1e-12);
        assert!((agreement.expected - 0.5).abs() < 1e-12);
        assert!((agreement.kappa.unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn three_grades_by_hand_and_degenerate_cases() {
        // (0,0) (1,1) (2,2) (2,1): p_o = 3/4; marginals A {0: 1/4, 1: 1/4, 2: 1/2},
        // B {0: 1/4, 1: 1/2, 2: 1/4}: p_e = 1/16 + 1/8 + 1/8 = 5/16;
        // kappa = (3/4 - 5/16) / (11/16) = 7/11.
        let agreement = cohens_kappa(&[(0, 0), (1, 1), (2, 2), (2, 1)]);
        assert!((agreement.kappa.unwrap() - 7.0 / 11.0).abs() < 1e-12);
        assert_eq!(cohens_kappa(&[(2, 2), (2, 2)]).kappa, None);
        assert_eq!(cohens_kappa(&[]).pairs, 0);
    }
}
