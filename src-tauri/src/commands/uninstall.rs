//! `metaclaw uninstall [--yes | --keep-data]`: stop MetaClaw, restore every agent it
//! connected, delete its keychain entries and, once confirmed, its data directory. Each
//! step reports what it did, and a second run finds nothing to do. The program itself
//! stays: removing a binary the package manager or the user installed is theirs to do.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use metaclaw_engine::agents;
use metaclaw_engine::config::{self, Config};
use metaclaw_engine::paths::Paths;
use metaclaw_engine::runfiles::RunInfo;
use metaclaw_engine::secrets::{SecretStore, env_var};

use super::agent::{forget_choice, print_disconnected};
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn run(paths: &Paths, yes: bool, keep_data: bool) -> Outcome {
    let mut did = false;
    let mut failures: Vec<String> = Vec::new();

    // (a) A running engine would rewrite its files (and reconnect agents) under our feet.
    if RunInfo::read(paths)?.is_some_and(|i| i.is_alive()) {
        super::stop::run(paths)?;
        did = true;
    }

    // A broken config must not keep the rest from being undone: fall back to the fixed
    // secret accounts.
    let loaded = match Config::load(paths) {
        Ok(l) => Some(l),
        Err(e) => {
            output::line(format!(
                "warning: {e}; fallback keys named only there are not found"
            ));
            None
        }
    };

    // (b) The backups live in the data directory: any agent left unrestored keeps it.
    let mut agents_left = false;
    match agents::system_env() {
        Ok(env) => {
            for name in agents::connected_names(paths, &env) {
                match agents::disconnect(paths, &env, &name) {
                    Ok(d) => {
                        print_disconnected(&name, &d);
                        did = true;
                    }
                    Err(e) => {
                        agents_left = true;
                        failures.push(format!("cannot restore {name}: {e}"));
                    }
                }
            }
        }
        Err(e) => {
            if agents::backup_root(paths).exists() {
                agents_left = true;
                failures.push(format!("cannot restore the connected agents: {e}"));
            }
        }
    }

    // (b') OpenClaw's WeChat plugin works without MetaClaw: removed only when the user says so.
    if let Ok(env) = agents::system_env()
        && metaclaw_engine::wechat::plugin::installed(&env)
    {
        did = true;
        if let Some(problem) = offer_wechat_removal(&env, yes)? {
            failures.push(problem);
        }
    }

    // (c) Every account MetaClaw may have written.
    let mut accounts: Vec<String> = config::SECRET_KEYS
        .iter()
        .map(|k| (*k).to_owned())
        .chain([metaclaw_engine::calendar::TOKEN_ACCOUNT.to_owned()])
        .collect();
    if let Some(l) = &loaded {
        accounts.extend(l.config.llm.fallbacks.iter().map(|f| f.key_account()));
    }
    match SecretStore::open(paths) {
        Ok(store) => {
            let mut deleted = 0;
            for account in &accounts {
                match store.delete(account) {
                    Ok(true) => deleted += 1,
                    Ok(false) => {}
                    Err(e) => failures.push(format!("cannot delete {account}: {e}")),
                }
            }
            if deleted > 0 {
                output::line(format!(
                    "Deleted {deleted} MetaClaw secret{} from the {}.",
                    if deleted == 1 { "" } else { "s" },
                    match store.backend() {
                        metaclaw_engine::secrets::Backend::Keychain => "keychain",
                        metaclaw_engine::secrets::Backend::File => "secrets file",
                    }
                ));
                did = true;
            }
        }
        Err(e) => failures.push(format!("cannot open the secret store: {e}")),
    }
    // Out of reach of the store: the user set them, the user removes them.
    for account in &accounts {
        let var = env_var(account);
        if std::env::var_os(&var).is_some_and(|v| !v.is_empty()) {
            output::line(format!(
                "note: {var} is set in your environment: remove it from your shell profile or service definition."
            ));
        }
    }

    // (d) The data directory, last: it holds the agent backups until they are restored.
    let home = &paths.home;
    if home.exists() {
        let keep_reason = if agents_left {
            Some("an agent could not be restored and its backup lives there".to_owned())
        } else if !looks_like_metaclaw(paths) {
            Some(
                "it does not look like MetaClaw's (no config.yaml, metaclaw.db or skills/ inside)"
                    .to_owned(),
            )
        } else if keep_data {
            Some("--keep-data".to_owned())
        } else if yes {
            None
        } else if std::io::stdin().is_terminal() {
            if confirm(paths)? {
                None
            } else {
                Some("not confirmed".to_owned())
            }
        } else {
            Some(
                "there is no terminal to confirm; `metaclaw uninstall --yes` removes it".to_owned(),
            )
        };
        match keep_reason {
            None => {
                std::fs::remove_dir_all(home).map_err(|e| {
                    Failure::error(format!("cannot remove {}: {e}", home.display()))
                })?;
                output::line(format!("Removed {}.", home.display()));
                did = true;
            }
            Some(why) => {
                output::line(format!(
                    "Kept {} ({why}); remove it yourself with `rm -rf {}`.",
                    home.display(),
                    home.display()
                ));
                // Kept data must not bring an agent back on the next `metaclaw start`.
                let chosen = loaded
                    .as_ref()
                    .and_then(|l| l.config.chosen_agent())
                    .map(|c| c.name());
                if let (Some(name), false) = (chosen, agents_left) {
                    forget_choice(paths, name)?;
                }
                if let Some(l) = loaded.as_ref().filter(|l| !l.legacy_secrets.is_empty()) {
                    output::line(format!(
                        "note: {} still holds {} key(s) in plain text (written by an earlier MetaClaw).",
                        paths.config.display(),
                        l.legacy_secrets.len()
                    ));
                }
                did = true;
            }
        }
    }
    if let Some(l) = &loaded {
        let skills = l.config.skills_dir(paths);
        if !skills.starts_with(home) && skills.exists() {
            output::line(format!(
                "note: the skills in {} (skills.dir) are outside the data directory and stay.",
                skills.display()
            ));
        }
    }

    if !did && failures.is_empty() {
        output::line("Nothing to do: MetaClaw is already uninstalled.");
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "metaclaw".into());
    output::line(format!(
        "The metaclaw program itself stays: delete {exe} (or uninstall it with the tool that installed it) to finish."
    ));
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Failure::error(failures.join("\n")))
    }
}

/// Safety: only a directory MetaClaw made is ever removed, never a home set by mistake to
/// somewhere else (`METACLAW_HOME=~`).
fn looks_like_metaclaw(paths: &Paths) -> bool {
    let home = &paths.home;
    let is_user_home = std::env::home_dir().is_some_and(|h| h == *home);
    let is_root = home.parent().is_none();
    !is_user_home
        && !is_root
        && (paths.config.is_file() || paths.db.is_file() || paths.skills.is_dir())
}

/// Asks (or takes `--yes`) whether to remove OpenClaw's WeChat plugin, and removes it with
/// OpenClaw's own command. `Some` says why the removal failed.
fn offer_wechat_removal(env: &agents::Env, yes: bool) -> Result<Option<String>, Failure> {
    let remove = if yes {
        true
    } else if std::io::stdin().is_terminal() {
        ask("Remove OpenClaw's WeChat plugin too (it keeps working without MetaClaw)? [y/N] ")?
    } else {
        false
    };
    let argv = metaclaw_engine::wechat::plugin::uninstall_command();
    if !remove {
        output::line(format!(
            "Kept OpenClaw's WeChat plugin; `{}` removes it.",
            argv.join(" ")
        ));
        return Ok(None);
    }
    let Some(program) = env.which(&argv[0]) else {
        return Ok(Some(format!(
            "cannot remove OpenClaw's WeChat plugin: `{}` is not on PATH",
            argv[0]
        )));
    };
    let mut run = argv.clone();
    run[0] = program.to_string_lossy().into_owned();
    match env.runner.run(&run, std::time::Duration::from_secs(120)) {
        Ok(out) if out.success() => {
            output::line("Removed OpenClaw's WeChat plugin.");
            Ok(None)
        }
        Ok(out) => Ok(Some(format!(
            "`{}` failed ({}): {}",
            argv.join(" "),
            out.code
                .map_or("killed".to_owned(), |c| format!("exit code {c}")),
            out.stderr.trim().lines().last().unwrap_or_default()
        ))),
        Err(e) => Ok(Some(format!("cannot run `{}`: {e}", argv.join(" ")))),
    }
}

/// A yes/no question at the terminal; anything but yes is no.
fn ask(question: &str) -> Result<bool, Failure> {
    let mut err = std::io::stderr();
    write!(err, "{question}")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// "Remove … ? [y/N]" at the terminal; anything but yes keeps the data.
fn confirm(paths: &Paths) -> Result<bool, Failure> {
    let files = count_files(&paths.home);
    ask(&format!(
        "Remove {} ({files} file{}: skills, memories, history)? [y/N] ",
        paths.home.display(),
        if files == 1 { "" } else { "s" }
    ))
}

fn count_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => count_files(&e.path()),
            Ok(_) => 1,
            Err(_) => 0,
        })
        .sum()
}
