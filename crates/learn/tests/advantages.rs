//! Reward normalisation, datum alignment and the distillation term.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use metaclaw_learn::{KlPenalty, build_datum, normalize_rewards};
use proptest::prelude::*;

#[test]
fn z_scores_of_a_small_batch() {
    let adv = normalize_rewards(&[1.0, -1.0, 1.0, 1.0]);
    // mean 0.5, population std sqrt(0.75)
    let std = 0.75f64.sqrt();
    let want = [0.5 / std, -1.5 / std, 0.5 / std, 0.5 / std];
    for (a, w) in adv.iter().zip(want) {
        assert!((a - w).abs() < 1e-12, "{adv:?}");
    }
}

#[test]
fn equal_rewards_give_zero_advantages() {
    for rewards in [vec![1.0; 4], vec![0.0; 3], vec![-1.0], vec![]] {
        let adv = normalize_rewards(&rewards);
        assert_eq!(adv.len(), rewards.len());
        assert!(adv.iter().all(|a| *a == 0.0), "{adv:?}");
    }
}

#[test]
fn datum_layout_by_hand() {
    let d = build_datum(&[10, 11, 12], &[20, 21], &[-0.5, -0.25], 2.0, None).unwrap();
    assert_eq!(d.input_tokens(), &[10, 11, 12, 20]);
    assert_eq!(d.target_tokens(), &[11, 12, 20, 21]);
    assert_eq!(d.logprobs(), &[0.0, 0.0, -0.5, -0.25]);
    assert_eq!(d.advantages(), &[0.0, 0.0, 2.0, 2.0]);
}

#[test]
fn distillation_adds_a_per_token_kl_penalty() {
    let teacher = [-0.25, -2.0];
    let d = build_datum(
        &[10],
        &[20, 21],
        &[-0.5, -1.0],
        1.0,
        Some(KlPenalty {
            teacher_logprobs: &teacher,
            coef: 0.5,
        }),
    )
    .unwrap();
    // 1 − 0.5 × (−0.5 − (−0.25)) = 1.125;  1 − 0.5 × (−1 − (−2)) = 0.5
    assert_eq!(d.advantages(), &[1.125, 0.5]);
    let short = build_datum(
        &[10],
        &[20, 21],
        &[-0.5, -1.0],
        1.0,
        Some(KlPenalty {
            teacher_logprobs: &teacher[..1],
            coef: 0.5,
        }),
    );
    assert!(short.unwrap_err().to_string().contains("1 values for 2"));
}

#[test]
fn malformed_samples_are_refused() {
    assert!(build_datum(&[], &[1], &[-1.0], 1.0, None).is_err());
    assert!(build_datum(&[1], &[], &[], 1.0, None).is_err());
    let err = build_datum(&[1], &[2, 3], &[-1.0], 1.0, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("2 completion tokens but 1 logprobs")
    );
}

proptest! {
    #[test]
    fn targets_and_logprobs_line_up_with_the_sampled_tokens(
        prompt in prop::collection::vec(0u32..1000, 1..20),
        completion in prop::collection::vec((0u32..1000, -20.0f32..0.0), 1..20),
        adv in -3.0f32..3.0,
    ) {
        let (tokens, lps): (Vec<u32>, Vec<f32>) = completion.into_iter().unzip();
        let d = build_datum(&prompt, &tokens, &lps, adv, None).unwrap();
        let p = prompt.len();
        let t = p + tokens.len() - 1;
        prop_assert_eq!(d.input_tokens().len(), t);
        prop_assert_eq!(d.target_tokens().len(), t);
        // Each position predicts the next token of prompt ++ completion.
        let all: Vec<u32> = prompt.iter().chain(&tokens).copied().collect();
        for i in 0..t {
            prop_assert_eq!(d.input_tokens()[i], all[i]);
            prop_assert_eq!(d.target_tokens()[i], all[i + 1]);
        }
        // The completion's targets carry exactly their sampled logprob and the advantage;
        // prompt targets are masked.
        for (j, tok) in tokens.iter().enumerate() {
            let i = p - 1 + j;
            prop_assert_eq!(d.target_tokens()[i], *tok);
            prop_assert_eq!(d.logprobs()[i].to_bits(), lps[j].to_bits());
            prop_assert_eq!(d.advantages()[i], adv);
        }
        for i in 0..p - 1 {
            prop_assert_eq!(d.logprobs()[i], 0.0);
            prop_assert_eq!(d.advantages()[i], 0.0);
        }
    }

    #[test]
    fn normalised_rewards_have_zero_mean_and_unit_std(
        rewards in prop::collection::vec(prop::sample::select(vec![-1.0, 0.0, 1.0]), 1..40),
    ) {
        let adv = normalize_rewards(&rewards);
        prop_assert_eq!(adv.len(), rewards.len());
        prop_assert!(adv.iter().all(|a| a.is_finite()));
        let n = adv.len() as f64;
        let mean = adv.iter().sum::<f64>() / n;
        prop_assert!(mean.abs() < 1e-9);
        let all_equal = rewards.iter().all(|r| *r == rewards[0]);
        let var = adv.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / n;
        if all_equal {
            prop_assert!(adv.iter().all(|a| *a == 0.0));
        } else {
            prop_assert!((var - 1.0).abs() < 1e-9);
            // Order is kept: a higher reward never gets a lower advantage.
            for i in 0..rewards.len() {
                for j in 0..rewards.len() {
                    if rewards[i] > rewards[j] {
                        prop_assert!(adv[i] > adv[j]);
                    }
                }
            }
        }
    }
}
