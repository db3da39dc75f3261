//! What every benchmark binary does around its run: a runtime, an optional time limit and
//! Ctrl-C (either drops the run, whose child guards then kill the children), and the exit
//! code: 0 when the targets are met, 1 when one is missed, 2 when the run itself failed.

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

/// Runs `run` to its verdict on a runtime of `threads` workers; `name` prefixes errors,
/// which go to the terminal of the person running the benchmark.
#[allow(clippy::print_stderr)]
pub fn run_to_exit<F>(name: &str, threads: usize, limit: Option<Duration>, run: F) -> ExitCode
where
    F: Future<Output = Result<bool>>,
{
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: cannot start runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = runtime.block_on(async {
        let limited = async {
            match limit {
                Some(limit) => tokio::time::timeout(limit, run)
                    .await
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("time limit of {limit:?} exceeded"))),
                None => run.await,
            }
        };
        tokio::select! {
            r = limited => r,
            _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
        }
    });
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("{name}: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// `name` in the directory of this binary (`target/release/metaclaw` beside the bench).
pub fn sibling(name: &str) -> Result<PathBuf> {
    Ok(std::env::current_exe()?.with_file_name(name))
}
