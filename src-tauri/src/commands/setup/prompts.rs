//! Questions at the terminal (or, when stdin is piped, one answer per line). Blank keeps the
//! shown default, so a re-run is an edit. End of input or Ctrl-C aborts: setup asks
//! everything before it writes, so nothing is written.

use std::io::{BufRead, IsTerminal, Write};

use metaclaw_engine::secrets::Secret;

use super::interrupt::{self, INTERRUPTED, Phase};
use crate::exit::Failure;
use crate::output;

pub struct Prompter {
    terminal: bool,
}

impl Prompter {
    pub fn new() -> Self {
        Prompter {
            terminal: std::io::stdin().is_terminal(),
        }
    }

    /// A line of text; blank gives `default`, and with no default the question repeats.
    pub fn text(&self, label: &str, default: Option<&str>) -> Result<String, Failure> {
        let default = default.filter(|d| !d.is_empty());
        let prompt = match default {
            Some(d) => format!("{label} [{d}]: "),
            None => format!("{label}: "),
        };
        loop {
            let answer = read_line(&prompt)?;
            match (answer.trim(), default) {
                ("", Some(d)) => return Ok(d.to_owned()),
                ("", None) => output::line("  (an answer is needed)"),
                (a, _) => return Ok(a.to_owned()),
            }
        }
    }

    /// One of `options` (case-insensitive), by name or 1-based number.
    pub fn choice(
        &self,
        label: &str,
        options: &[&str],
        default: Option<&str>,
    ) -> Result<String, Failure> {
        loop {
            let answer = self.text(label, default)?;
            if let Some(picked) = pick(&answer, options) {
                return Ok(picked.to_owned());
            }
            output::line(format!("  choose one of: {}", options.join(", ")));
        }
    }

    /// A secret, never echoed. With `keep` (`stored`, …) shown in brackets a value exists and
    /// blank keeps it (`None`); without, an answer is needed.
    pub fn hidden(&self, label: &str, keep: Option<&str>) -> Result<Option<Secret>, Failure> {
        let prompt = match keep {
            Some(k) => format!("{label} [{k}]: "),
            None => format!("{label}: "),
        };
        loop {
            let answer = if self.terminal {
                interrupt::hidden_begins();
                let read = rpassword::prompt_password(&prompt);
                interrupt::hidden_ends();
                match read {
                    Ok(a) => a,
                    Err(e) => return Err(aborted(&e)),
                }
            } else {
                read_line(&prompt)?
            };
            let answer = answer.trim();
            match (answer.is_empty(), keep) {
                (false, _) => return Ok(Some(Secret::new(answer))),
                (true, Some(_)) => return Ok(None),
                (true, None) => output::line("  (an answer is needed)"),
            }
        }
    }
}

/// The option `answer` names: its number, or its name.
pub fn pick<'o>(answer: &str, options: &[&'o str]) -> Option<&'o str> {
    let answer = answer.trim();
    if let Ok(n) = answer.parse::<usize>() {
        return n.checked_sub(1).and_then(|i| options.get(i)).copied();
    }
    options
        .iter()
        .find(|o| o.eq_ignore_ascii_case(answer))
        .copied()
}

fn read_line(prompt: &str) -> Result<String, Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    drop(out);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) => Err(end_of_input()),
        Ok(_) => Ok(line),
        Err(e) => Err(aborted(&e)),
    }
}

fn end_of_input() -> Failure {
    interrupt::set(Phase::Aborting);
    output::line("");
    Failure::error("setup aborted (end of input): nothing was written")
}

fn aborted(e: &std::io::Error) -> Failure {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => end_of_input(),
        std::io::ErrorKind::Interrupted => {
            interrupt::set(Phase::Aborting);
            Failure {
                code: INTERRUPTED,
                message: "setup aborted: nothing was written".into(),
            }
        }
        _ => Failure::error(format!("cannot read the answer: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::pick;

    #[test]
    fn options_by_number_or_name() {
        let options = ["kimi", "openai", "custom"];
        assert_eq!(pick("2", &options), Some("openai"));
        assert_eq!(pick(" Custom ", &options), Some("custom"));
        assert_eq!(pick("0", &options), None);
        assert_eq!(pick("4", &options), None);
        assert_eq!(pick("nope", &options), None);
    }
}
