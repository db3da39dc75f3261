//! Embeddings of the test model (all-MiniLM-L6-v2) through the public API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{cosine, model, norm};
use metaclaw_embed::Embedder;

/// Reference vectors from Python sentence-transformers 6.3 (torch 2.15, CPU) on the same
/// files: `SentenceTransformer(dir).encode(texts, normalize_embeddings=True)[:, :5]`.
const REFERENCE: [(&str, [f32; 5]); 4] = [
    (
        "The cat sits on the mat.",
        [0.134177, -0.0329, -0.024804, 0.041439, -0.036348],
    ),
    (
        "How do I reset my password?",
        [0.006903, -0.063023, -0.072044, -0.032496, -0.042709],
    ),
    (
        "这只猫坐在垫子上。",
        [-0.017763, 0.088196, 0.048613, -0.012061, -0.031278],
    ),
    ("hello", [-0.062772, 0.054959, 0.052165, 0.08579, -0.082749]),
];

/// The dense layers run on 8-bit weights (`src/int8`): measured within 0.0035 of the
/// reference in every component checked here (3e-5 in f32), whose cosines are the test below.
const TOLERANCE: f32 = 0.006;

/// Cosine of each vector with the same model's f32 vector: measured 0.9985 at worst over 216
/// texts of 3–40 words, 0.9996 in the median.
const F32_COSINE: f32 = 0.998;

#[test]
fn vectors_have_the_model_dimension_and_unit_length() {
    let model = model();
    assert_eq!(model.dimension(), 384);
    assert_eq!(model.max_tokens(), 256);
    let vectors = model
        .embed(&[
            "short",
            "",
            "a somewhat longer sentence about the weather in spring",
        ])
        .unwrap();
    assert_eq!(vectors.len(), 3);
    for v in &vectors {
        assert_eq!(v.len(), 384);
        assert!((norm(v) - 1.0).abs() < 1e-5, "norm {}", norm(v));
    }
    assert!(model.embed(&[]).unwrap().is_empty());
}

#[test]
fn the_forward_pass_matches_sentence_transformers() {
    let model = model();
    for (text, expected) in REFERENCE {
        let v = model.embed_one(text).unwrap();
        for (i, (got, want)) in v.iter().zip(expected).enumerate() {
            assert!(
                (got - want).abs() < TOLERANCE,
                "{text:?}[{i}]: {got} vs reference {want}"
            );
        }
    }
}

#[test]
fn vectors_stay_within_a_cosine_of_0_998_of_the_f32_encoder() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/f32_vectors.json");
    let data: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let model = model();
    let vectors = data["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 5);
    for item in vectors {
        let text = item["text"].as_str().unwrap();
        let want: Vec<f32> = item["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let got = model.embed_one(text).unwrap();
        let c = cosine(&got, &want);
        assert!(
            c >= F32_COSINE,
            "{:?}: cosine {c}",
            &text[..text.len().min(30)]
        );
    }
}

#[test]
fn long_texts_are_cut_at_256_tokens_like_the_reference() {
    let long: Vec<String> = (0..60)
        .map(|i| format!("The quick brown fox jumps over the lazy dog number {i}."))
        .collect();
    let long = long.join(" "); // 722 tokens
    let v = model().embed_one(&long).unwrap();
    let reference = [0.04183, -0.04483, 0.082813, -0.006173, -0.064136];
    for (got, want) in v.iter().zip(reference) {
        assert!((got - want).abs() < TOLERANCE, "{got} vs reference {want}");
    }
}

#[test]
fn meaning_beats_shared_words() {
    let model = model();
    let v = model
        .embed(&[
            "How do I reset my password?",
            "I forgot my login credentials and need to change them.",
            "The stock market fell sharply on Monday.",
            "Write every timestamp in ISO 8601 with the +08:00 offset.",
            "Always format dates as ISO 8601 including the timezone offset.",
            "My favourite band released a new album yesterday.",
        ])
        .unwrap();
    // Reference cosines: 0.634 against 0.057, and 0.709 against 0.127.
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.3);
    assert!(cosine(&v[3], &v[4]) > cosine(&v[3], &v[5]) + 0.3);
}

#[test]
fn the_same_text_gives_the_same_vector() {
    let model = model();
    let a = model
        .embed_one("Remember that I prefer tea over coffee.")
        .unwrap();
    let b = model
        .embed_one("Remember that I prefer tea over coffee.")
        .unwrap();
    assert_eq!(a, b);
}

#[test]
fn a_batch_equals_one_by_one() {
    let model = model();
    let texts: Vec<String> = (0..40)
        .map(|i| "word ".repeat(i % 13 + 1) + &format!("number {i}"))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = model.embed(&texts).unwrap();
    assert_eq!(batch.len(), texts.len());
    for (text, together) in texts.iter().zip(&batch) {
        let alone = model.embed_one(text).unwrap();
        let diff = alone
            .iter()
            .zip(together)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(diff < 1e-5, "{text:?} differs by {diff} in a batch");
    }
}

#[test]
fn the_model_id_names_the_folder_and_the_content() {
    let id = model().model_id();
    let (name, hash) = id.split_once('@').unwrap();
    assert_eq!(name, common::NAME);
    assert_eq!(hash.len(), 12);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
    // Loading again gives the same id.
    let again = metaclaw_embed::Embedder::load(&common::shared_store().1).unwrap();
    assert_eq!(again.model_id(), id);
}

#[test]
fn the_embedder_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<metaclaw_embed::Embedder>();
    let model = model();
    let reference = model.embed_one("shared").unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| model.embed_one("shared").unwrap()))
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), reference);
        }
    });
}

/// A long text's layers split over a pool's two workers (the second kept awake for the call,
/// taking each layer's second half) give the vector one worker gives, to the bit.
#[test]
fn two_workers_give_the_vector_of_one() {
    let model = model();
    let text = "The quarterly report of the northern region is due on Friday. ".repeat(12);
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| model.embed_one(&text).unwrap())
    };
    assert!(
        model.token_count(&text).unwrap() > 100,
        "long enough to split"
    );
    assert_eq!(on(2), on(1));
}

/// A job handed to the pool gets the vector `embed` gives, on a worker of the pool; a job
/// that panics is caught, so the pool still runs the next one and the process lives on.
#[test]
fn a_spawned_job_embeds_on_the_pool_and_a_panic_stays_in_it() {
    let model = std::sync::Arc::new(Embedder::load(&common::shared_store().1).unwrap());
    let text = "Log the meeting that started at nine this morning.";
    let (tx, rx) = std::sync::mpsc::channel();
    let panicked = tx.clone();
    model.spawn(move |_| {
        let _keep = panicked;
        panic!("a job that fails");
    });
    model.spawn(move |m| {
        let on_worker = rayon::current_thread_index().is_some();
        tx.send((on_worker, m.embed_one(text).unwrap())).unwrap();
    });
    let (on_worker, vector) = rx.recv().unwrap();
    assert!(on_worker, "the job runs on a worker of the pool");
    assert_eq!(vector, model.embed_one(text).unwrap());
    assert!(rx.recv().is_err(), "the panicked job dropped its sender");
}

/// The model's indexing threads in this process: (niceness, CPU time in clock ticks).
#[cfg(target_os = "linux")]
fn indexing_threads() -> Vec<(i64, u64)> {
    let mut found = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != metaclaw_embed::BACKGROUND_THREAD {
            continue;
        }
        // A thread that ended meanwhile (another test's model dropped) has no stat left.
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // After "pid (comm) ": state is field 3, utime 14, stime 15, nice 19.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        let field = |n: usize| fields[n - 3];
        let cpu = field(14).parse::<u64>().unwrap() + field(15).parse::<u64>().unwrap();
        found.push((field(19).parse::<i64>().unwrap(), cpu));
    }
    found
}

/// Index work runs on the model's own thread at the lowest CPU priority (a turn's query,
/// embedded meanwhile, gets the cores first), and gives the vectors a query would get.
#[cfg(target_os = "linux")]
#[test]
fn indexing_runs_on_a_thread_of_the_lowest_priority_with_the_same_vectors() {
    let model = model();
    let texts: Vec<String> = (0..16)
        .map(|i| {
            format!(
                "Note {i}: the quarterly report of the northern region is due on Friday, \
                 with the figures of every team and the plan for the next year"
            )
        })
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    // The pool's thread starts (and lowers its priority) on its own; one job waits for that.
    model.embed_in_background(&["start"]).unwrap();
    let before = indexing_threads();
    assert!(
        !before.is_empty(),
        "no {} thread in this process",
        metaclaw_embed::BACKGROUND_THREAD
    );
    assert!(before.iter().all(|&(nice, _)| nice == 19), "{before:?}");

    let indexed = model.embed_in_background(&texts).unwrap();
    let cpu = |threads: &[(i64, u64)]| threads.iter().map(|&(_, cpu)| cpu).sum::<u64>();
    let after = indexing_threads();
    assert!(
        cpu(&after) > cpu(&before),
        "the indexing thread did no work: {before:?} → {after:?}"
    );

    let queried = model.embed(&texts[..3]).unwrap();
    for (q, i) in queried.iter().zip(&indexed) {
        assert!(cosine(q, i) > 0.99999, "cosine {}", cosine(q, i));
    }
}
