//! The CLI's own output: results on stdout, problems on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub fn line(s: impl std::fmt::Display) {
    println!("{s}");
}

pub fn error(s: impl std::fmt::Display) {
    eprintln!("error: {s}");
}
