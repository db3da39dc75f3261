#![allow(clippy::unwrap_used)]

use super::*;

/// Deterministic values in [-1, 1] with some larger outliers, like a layer's activations.
fn values(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let v = ((i as f32 + 1.0) * (seed * 0.618 + 0.1)).sin();
            if i % 97 == 3 { v * 6.0 } else { v }
        })
        .collect()
}

fn reference(x: &[f32], w: &[f32], bias: &[f32], inputs: usize) -> Vec<f32> {
    x.chunks_exact(inputs)
        .flat_map(|row| {
            w.chunks_exact(inputs)
                .zip(bias)
                .map(|(wr, b)| row.iter().zip(wr).map(|(a, c)| a * c).sum::<f32>() + b)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_kernel_gives_the_same_values_as_the_portable_one() {
    let kernels = Kernel::available();
    // Row counts that take every tile size: 8, 4 and 1.
    for (rows, inputs, outputs) in [
        (1, 4, 16),
        (3, 7, 5),
        (5, 384, 40),
        (9, 130, 33),
        (12, 10, 16),
        (15, 64, 20),
    ] {
        let w = values(outputs * inputs, 1.0);
        let layer = Int8Linear::new(&w, outputs, inputs, values(outputs, 2.0)).unwrap();
        let x = values(rows * inputs, 3.0);
        let want = layer.forward_with(Kernel::Portable, &x, inputs).unwrap();
        assert_eq!(want.len(), rows * outputs);
        for &k in &kernels {
            let got = layer.forward_with(k, &x, inputs).unwrap();
            assert_eq!(got, want, "{k:?} at {rows}×{inputs}→{outputs}");
        }
    }
}

#[test]
fn the_result_is_close_to_the_f32_product() {
    let (rows, inputs, outputs) = (6, 384, 64);
    let w: Vec<f32> = values(outputs * inputs, 4.0)
        .iter()
        .map(|v| v * 0.05)
        .collect();
    let bias = values(outputs, 5.0);
    let x = values(rows * inputs, 6.0);
    let want = reference(&x, &w, &bias, inputs);
    let layer = Int8Linear::new(&w, outputs, inputs, bias).unwrap();
    let got = layer.forward(&x, inputs).unwrap();
    let err: f32 = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f32>()
        .sqrt();
    let norm: f32 = want.iter().map(|b| b * b).sum::<f32>().sqrt();
    assert!(err / norm < 0.02, "relative error {}", err / norm);
}

#[test]
fn many_rows_on_several_threads_equal_each_row_alone() {
    let (rows, inputs, outputs) = (256, 384, 384);
    assert!(
        rows * inputs * outputs >= PARALLEL_MIN,
        "the batch runs in parallel"
    );
    let layer = Int8Linear::new(
        &values(outputs * inputs, 7.0),
        outputs,
        inputs,
        vec![0.5; outputs],
    )
    .unwrap();
    let x = values(rows * inputs, 8.0);
    let together = layer.forward(&x, inputs).unwrap();
    for (row, want) in x.chunks_exact(inputs).zip(together.chunks_exact(outputs)) {
        assert_eq!(layer.forward(row, inputs).unwrap(), want);
    }
}

#[test]
fn bad_shapes_and_values_are_refused_or_kept_to_their_row() {
    assert!(
        Int8Linear::new(&[1.0; 6], 2, 3, vec![0.0; 3]).is_none(),
        "bias length"
    );
    assert!(
        Int8Linear::new(&[1.0; 5], 2, 3, vec![0.0; 2]).is_none(),
        "weight length"
    );
    assert!(Int8Linear::new(&[1.0, f32::NAN, 0.0, 0.0, 0.0, 0.0], 2, 3, vec![0.0; 2]).is_none());
    let layer = Int8Linear::new(&[1.0, 2.0, 3.0, 0.0, 0.0, 0.0], 2, 3, vec![0.0, 1.0]).unwrap();
    assert!(layer.forward(&[1.0; 4], 4).is_none(), "another width");
    assert!(layer.forward(&[1.0; 4], 3).is_none(), "not whole rows");
    let y = layer
        .forward(&[1.0, 1.0, 1.0, f32::INFINITY, 0.0, 0.0], 3)
        .unwrap();
    assert!(
        (y[0] - 6.0).abs() < 0.05 && (y[1] - 1.0).abs() < 1e-6,
        "{y:?}"
    );
    assert!(y[2].is_nan() && y[3].is_nan(), "{y:?}");
    assert!(
        layer.forward(&[], 3).unwrap().is_empty(),
        "no rows, no outputs"
    );
    let zero = layer.forward(&[0.0; 3], 3).unwrap();
    assert_eq!(zero, [0.0, 1.0], "a zero row gives the bias");
}

#[test]
fn a_layer_too_wide_for_full_precision_does_not_overflow() {
    let inputs = 20_000;
    assert!(activation_levels(inputs) < ACTIVATION_LEVELS);
    let layer = Int8Linear::new(&vec![1.0; 2 * inputs], 2, inputs, vec![0.0, 1.0]).unwrap();
    for k in Kernel::available() {
        let y = layer.forward_with(k, &vec![1.0; inputs], inputs).unwrap();
        assert!((y[0] - inputs as f32).abs() < 1.0, "{k:?}: {y:?}");
        assert!((y[1] - inputs as f32 - 1.0).abs() < 1.0, "{k:?}: {y:?}");
    }
}
